"""Client quotas as ZooKeeper-mode Kafka keeps and enforces them (KIP-13, 55, 124, 219, 257, 599).

Quotas live in the same znodes as Kafka 3.9 in ZK mode: `/config/users/<user>`,
`/config/users/<user>/clients/<client-id>`, `/config/clients/<client-id>` (names sanitized,
`<default>` for the defaults), each `{"version":1,"config":{"producer_byte_rate":"1024",...}}`, with a
`/config/changes` notification per change (TopicConfigs hands those to `reload`). A request's quota
is the most specific entity that sets the key (Kafka's DefaultQuotaCallback order, below); the rate
it is measured against is shared by every user/client the entity covers, a default entity giving each
user or client its own. Rates are Kafka's: quota.window.num samples (11) of quota.window.size.seconds
(1), the window at least all but one of them; a request that
takes the rate over its bound gets a throttle time of (rate - bound) / bound * window, which the
response carries (throttle_time_ms) and for which the connection reads nothing more (KIP-219).
The controller mutation rate (KIP-599) is Kafka's token bucket instead (see TokenBucket). The
request_percentage quota (KIP-124) is measured on the request handler's time (request_quota.py).
"""

from __future__ import annotations

import logging
from collections import deque
from typing import Any, Iterable

from pylog.common.clock import now_ms
from pylog.zk import errors
from pylog.zk.quota_entities import DEFAULT, FETCH, MUTATION, PRODUCE, QUOTA_KEYS, REQUEST, sanitize

__all__ = ["ClientQuotas", "Rate", "DEFAULT", "FETCH", "MUTATION", "PRODUCE", "QUOTA_KEYS", "REQUEST",
           "mutation_allowed", "principal_user", "record_request", "sanitize"]

log = logging.getLogger("pylog.quotas")

SAMPLES = 11  # quota.window.num's default
WINDOW_MS = 1000  # quota.window.size.seconds' default


class Rate:
    """Kafka's Rate over SampledStat: per-second rate of what was recorded in the last SAMPLES windows."""

    __slots__ = ("samples", "num", "span_ms")

    def __init__(self, num: int = SAMPLES, span_ms: int = WINDOW_MS) -> None:
        self.samples: deque[list[float]] = deque()  # [window start ms, total]
        self.num = num
        self.span_ms = span_ms

    def record(self, value: float, now_ms: int) -> None:
        """Add `value` to the current sample (a new one once the current window is over)."""
        self._purge(now_ms)
        if not self.samples or now_ms - self.samples[-1][0] >= self.span_ms:
            self.samples.append([now_ms, 0.0])
        self.samples[-1][1] += value

    def window_ms(self, now_ms: int) -> float:
        """The span the rate divides by: from the oldest sample, at least num - 1 whole windows."""
        self._purge(now_ms)
        elapsed = now_ms - (self.samples[0][0] if self.samples else now_ms)
        full = int(elapsed // self.span_ms)
        if full < self.num - 1:
            elapsed += (self.num - 1 - full) * self.span_ms
        return float(max(elapsed, 1))

    def rate(self, now_ms: int) -> float:
        """Per second over window_ms."""
        window = self.window_ms(now_ms)
        return sum(s[1] for s in self.samples) * 1000.0 / window

    def _purge(self, now_ms: int) -> None:
        while self.samples and now_ms - self.samples[0][0] >= self.num * self.span_ms:
            self.samples.popleft()


def entity_path(user: str | None, client_id: str | None) -> str:
    """The /config-relative path of an entity: 'users/<u>[/clients/<c>]' or 'clients/<c>' (names as stored)."""
    if user is not None:
        return f"users/{user}" + ("" if client_id is None else f"/clients/{client_id}")
    return f"clients/{client_id}"


def _candidates(user: str, client: str) -> list[tuple[str, str | None, str | None]]:
    """(entity path, user tag, client tag) in DefaultQuotaCallback's order, most specific first."""
    return [
        (entity_path(user, client), user, client),
        (entity_path(user, DEFAULT), user, client),
        (entity_path(user, None), user, ""),
        (entity_path(DEFAULT, client), user, client),
        (entity_path(DEFAULT, DEFAULT), user, client),
        (entity_path(DEFAULT, None), user, ""),
        (entity_path(None, client), "", client),
        (entity_path(None, DEFAULT), "", client),
    ]


class TokenBucket:
    """Kafka's TokenBucket (KIP-599's controller mutation rate): `rate` tokens/s refill up to a burst of
    rate * samples * window; a mutation takes its partitions' tokens and may leave the bucket negative."""

    __slots__ = ("rate", "burst", "tokens", "last_ms")

    def __init__(self, rate: float, burst: float, now_ms: int) -> None:
        self.rate, self.burst, self.tokens, self.last_ms = rate, burst, burst, now_ms

    def value(self, now_ms: int) -> float:
        """The tokens left now (negative: in debt)."""
        self.tokens = min(self.burst, self.tokens + self.rate * max(now_ms - self.last_ms, 0) / 1000)
        self.last_ms = max(now_ms, self.last_ms)
        return self.tokens

    def throttle_ms(self, now_ms: int) -> int:
        """How long until the debt is paid (ControllerMutationQuotaManager's -tokens / rate)."""
        return max(0, round(-self.value(now_ms) / self.rate * 1000)) if self.rate > 0 else 0


class ClientQuotas:
    """Every quota entity's settings and the rates measured against them (event loop only)."""

    def __init__(self, samples: int = SAMPLES, window_ms: int = WINDOW_MS) -> None:
        self.samples, self.window_ms = samples, window_ms
        self.entities: dict[str, dict[str, float]] = {}  # entity path -> {quota key: bound}
        self.has_request_quotas = False  # some entity sets request_percentage: requests are timed (request_quota.py)
        self._rates: dict[tuple[str, str, str], Rate] = {}
        self._buckets: dict[tuple[str, str], TokenBucket] = {}

    # -- settings ------------------------------------------------------------------------------
    def load(self, zk: Any) -> None:
        """Read every user, user/client and client entity (start-up; blocking)."""
        for user in zk.get_all_entities_with_config("users"):
            self._read(zk, "users", user)
            for client in _children(zk, f"/config/users/{user}/clients"):
                self._read(zk, "users", f"{user}/clients/{client}")
        for client in zk.get_all_entities_with_config("clients"):
            self._read(zk, "clients", client)

    def reload(self, zk: Any, entity_type: str, name: str) -> None:
        """Re-read one entity after its change notification (blocking)."""
        self._read(zk, entity_type, name)
        log.info("Updated quotas of %s/%s: %s", entity_type, name, self.entities.get(f"{entity_type}/{name}", {}))

    def _read(self, zk: Any, entity_type: str, name: str) -> None:
        config = zk.get_entity_config(entity_type, name)
        quotas = {}
        for key in QUOTA_KEYS:
            try:
                quotas[key] = float(config[key])
            except (KeyError, ValueError):
                continue
        path = f"{entity_type}/{name}"
        if quotas:
            self.entities[path] = quotas
        else:
            self.entities.pop(path, None)
        self._rates.clear()  # the entity a client's rate is kept under may have changed
        self.has_request_quotas = any(REQUEST in q for q in self.entities.values())
        self._buckets.clear()

    def quota(self, key: str, user: str, client: str) -> tuple[float, str, str] | None:
        """(bound, user tag, client tag) of the most specific entity setting `key`, or None (unlimited)."""
        if not self.entities:
            return None
        for path, user_tag, client_tag in _candidates(sanitize(user), sanitize(client)):
            bound = self.entities.get(path, {}).get(key)
            if bound is not None:
                return bound, user_tag or "", client_tag or ""
        return None

    # -- enforcement ---------------------------------------------------------------------------
    def record(self, key: str, user: str, client: str, value: float, now_ms: int) -> int:
        """Record `value` against the client's `key` quota; the throttle time in ms (0 within it)."""
        found = self.quota(key, user, client)
        if found is None:
            return 0
        bound, user_tag, client_tag = found
        rate = self._rates.get((key, user_tag, client_tag))
        if rate is None:
            rate = self._rates[(key, user_tag, client_tag)] = Rate(self.samples, self.window_ms)
        rate.record(value, now_ms)
        observed = rate.rate(now_ms)
        if observed <= bound or bound <= 0:
            return 0 if bound > 0 else int(rate.window_ms(now_ms))
        return round((observed - bound) / bound * rate.window_ms(now_ms))

    def mutate(self, user: str, client: str, partitions: int, now_ms: int, strict: bool) -> tuple[bool, int]:
        """KIP-599 for a topic creation or deletion of `partitions`: (allowed, throttle ms). Strict (CreateTopics
        v6+, CreatePartitions v3+, DeleteTopics v5+) refuses it while the bucket is in debt and otherwise lets it
        through whatever it costs; permissive (older versions) always lets it through, with the throttle time."""
        found = self.quota(MUTATION, user, client)
        if found is None:
            return True, 0
        bound, user_tag, client_tag = found
        bucket = self._buckets.get((user_tag, client_tag))
        if bucket is None:
            bucket = TokenBucket(bound, bound * self.samples * self.window_ms / 1000, now_ms)
            self._buckets[(user_tag, client_tag)] = bucket
        if strict and bucket.value(now_ms) < 0:
            return False, bucket.throttle_ms(now_ms)
        bucket.value(now_ms)
        bucket.tokens -= partitions
        return True, 0 if strict else bucket.throttle_ms(now_ms)

    def unrecord(self, key: str, user: str, client: str, value: float, now_ms: int) -> None:
        """Take back a recorded value (a throttled fetch is answered empty, as Kafka's unrecordQuotaSensor)."""
        found = self.quota(key, user, client)
        if found is not None:
            rate = self._rates.get((key, found[1], found[2]))
            if rate is not None:
                rate.record(-value, now_ms)

    def describe(self) -> Iterable[tuple[str, dict[str, float]]]:
        """Every entity with a quota: (entity path, {key: bound})."""
        return sorted(self.entities.items())


def _children(zk: Any, path: str) -> list[str]:
    try:
        return sorted(zk.get_children(path))
    except errors.NoNodeError:  # the user has no per-client entities
        return []


def principal_user(principal: str | None) -> str:
    """The user a principal's quotas are looked up under ('User:alice' -> 'alice')."""
    if not principal:
        return "ANONYMOUS"
    return principal.split(":", 1)[1] if ":" in principal else principal


def record_request(quotas: ClientQuotas, principal: str | None, client_id: str | None, key: str, value: float,
                   now_ms: int) -> int:
    """Record a request's `value` against its client's `key` quota: the throttle time in ms."""
    return quotas.record(key, principal_user(principal), client_id or "", value, now_ms)


def mutation_allowed(ctx: Any, partitions: int, strict: bool) -> bool:
    """Take a controller mutation of `partitions` from the request's client quota (KIP-599); False when refused
    (THROTTLING_QUOTA_EXCEEDED). The request's throttle time becomes the largest seen."""
    principal = ctx.security.principal if ctx.security is not None else None
    ok, throttle = ctx.broker.quotas.mutate(principal_user(principal), ctx.header.client_id or "", partitions,
                                            now_ms(), strict)
    ctx.throttle_ms = max(ctx.throttle_ms, throttle)
    return ok
