"""KIP-124's request time: only the handler's own steps on the loop count, and the throttle is bounded."""

import asyncio
import time
from types import SimpleNamespace

from pylog.broker.handlers import Later
from pylog.broker.quotas import ClientQuotas
from pylog.broker.request_quota import BusyTime, charged, request_throttle, with_throttle
from pylog.protocol.api import ApiKey


def test_busy_time_counts_steps_not_waits():
    async def handler():
        time.sleep(0.02)  # working on the loop
        await asyncio.sleep(0.2)  # parked (a long poll, a rebalance): not the handler's time
        time.sleep(0.02)
        return "done"

    async def main():
        timed = BusyTime(handler())
        return await timed, timed.busy
    result, busy = asyncio.run(main())
    assert result == "done" and 0.035 <= busy < 0.15


def test_busy_time_passes_exceptions_and_cancellation():
    async def failing():
        await asyncio.sleep(0)
        raise ValueError("boom")

    async def main():
        try:
            await BusyTime(failing())
        except ValueError as exc:
            return str(exc)
    assert asyncio.run(main()) == "boom"

    async def cancelled():
        task = asyncio.ensure_future(BusyTime(asyncio.sleep(10)))
        await asyncio.sleep(0.01)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            return True
    assert asyncio.run(cancelled())


def _ctx(api_key=ApiKey.Metadata, quotas=None):
    return SimpleNamespace(broker=SimpleNamespace(quotas=quotas or ClientQuotas(3, 1000)), security=None,
                           header=SimpleNamespace(api_key=api_key, client_id="c"))


def test_charged_only_with_a_request_quota_and_not_for_exempt_requests():
    quotas = ClientQuotas(3, 1000)
    assert not charged(_ctx(quotas=quotas), False)
    quotas.entities["clients/c"] = {"request_percentage": 1.0}
    quotas.has_request_quotas = True
    assert charged(_ctx(quotas=quotas), False)
    assert not charged(_ctx(quotas=quotas), True)  # a follower's fetch
    assert not charged(_ctx(ApiKey.LeaderAndIsr, quotas), False)
    assert not charged(_ctx(ApiKey.SaslAuthenticate, quotas), False)


def test_throttle_is_bounded_by_one_window_and_set_on_responses():
    quotas = ClientQuotas(3, 1000)
    quotas.entities["clients/c"] = {"request_percentage": 1.0}
    ctx = _ctx(quotas=quotas)
    assert request_throttle(ctx, 0.001) == 0  # 0.1 % of the 2 s minimum window's allowance
    assert request_throttle(ctx, 5.0) == 1000  # far over: one window at most
    resp = SimpleNamespace(throttle_time_ms=0)
    assert with_throttle(resp, 250).throttle_time_ms == 250
    assert with_throttle(SimpleNamespace(throttle_time_ms=900), 250).throttle_time_ms == 900

    async def finish():
        return SimpleNamespace(throttle_time_ms=0)
    later = with_throttle(Later(finish), 300)
    assert asyncio.run(later.finish()).throttle_time_ms == 300


def test_an_encoded_fetch_carries_the_request_throttle():
    from pylog.protocol.codec import RequestHeader, decode_response
    from pylog.protocol.fetch import encode_fetch_response
    for version in (4, 11, 12, 17):
        header = RequestHeader(ApiKey.Fetch, version, 9, "c", 0)
        parts = with_throttle(encode_fetch_response(header, [], throttle_time_ms=40), 700, header)
        corr, resp = decode_response(ApiKey.Fetch, version, b"".join(parts)[4:])
        assert (corr, resp.throttle_time_ms) == (9, 700)
        kept = with_throttle(encode_fetch_response(header, [], throttle_time_ms=900), 700, header)
        assert decode_response(ApiKey.Fetch, version, b"".join(kept)[4:])[1].throttle_time_ms == 900
