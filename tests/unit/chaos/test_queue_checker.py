"""The queue checker (pylog/chaos/jepsen): one small synthetic history per anomaly, each found with its count and
classified as Jepsen's allowed-error-types does, and a clean history that reports nothing."""

from __future__ import annotations

import pytest

from pylog.chaos.jepsen import Extras, HistoryWriter, check


class H:
    """A history builder: each method records one operation (invoke + completion) as the workload would."""

    def __init__(self) -> None:
        self.lines: list[dict] = [{"type": "meta", "keys": [["t", 0], ["t", 1]]}]

    def _op(self, process: int, f: str, inv_value, done_value, type_: str = "ok", client: str = "idempotent",
            **extra) -> "H":
        n = len(self.lines)
        self.lines.append({"type": "invoke", "process": process, "f": f, "value": inv_value, "client": client,
                           "index": n, "time": n / 10})
        self.lines.append({"type": type_, "process": process, "f": f, "value": done_value, "client": client,
                           "index": n + 1, "time": n / 10 + 0.05, **extra})
        return self

    def send(self, process: int, k: int, v: int, offset: int | None, type_: str = "ok",
             client: str = "idempotent") -> "H":
        return self._op(process, "send", [["send", k, v]], [["send", k, [offset, v]]], type_, client)

    def poll(self, process: int, reads: dict[int, list[tuple[int, int]]], type_: str = "ok", **extra) -> "H":
        return self._op(process, "poll", [["poll"]], [["poll", {str(k): [list(r) for r in rs]
                                                               for k, rs in reads.items()}]], type_, **extra)

    def txn(self, process: int, mops: list, type_: str = "ok") -> "H":
        inv = [["send", m[1], m[2]] if m[0] == "send" else ["poll"] for m in mops]
        done = [["send", m[1], [m[3], m[2]]] if m[0] == "send" else
                ["poll", {str(k): [list(r) for r in rs] for k, rs in m[1].items()}] for m in mops]
        return self._op(process, "txn", inv, done, type_, "transactional")

    def via(self, process: int, how: str, keys=(0, 1), seek: bool = False) -> "H":
        return self._op(process, how, list(keys), list(keys), seek_to_beginning=seek)


def base(via: str = "assign") -> H:
    """Three values on key 0 at offsets 0-2 (offset 3 is a transaction marker: a gap), one on key 1."""
    return (H().via(1, via).via(2, "assign")
            .send(0, 0, 1, 0).send(0, 0, 2, 1).send(0, 0, 3, 2).send(0, 0, 4, 4).send(0, 1, 10, 0))


def read_all(h: H, process: int = 2) -> H:
    return h.poll(process, {0: [(0, 1), (1, 2), (2, 3), (4, 4)], 1: [(0, 10)]})


def test_a_clean_history_reports_nothing():
    h = read_all(base())
    h.poll(1, {0: [(0, 1), (1, 2)]}).poll(1, {0: [(2, 3), (4, 4)], 1: [(0, 10)]})  # the marker's gap is no skip
    result = check(h.lines)
    assert result.counts() == {} and result.valid
    assert result.stats["ops"] == 10 and result.stats["values_read"] == 5


def case(name: str):
    return pytest.param(name, id=name)


CASES = {
    # an ok send at index 1 below what ok polls read (index 3), read by no one
    "lost-write": (lambda: base().poll(1, {0: [(0, 1)]}).poll(2, {0: [(2, 3), (4, 4)], 1: [(0, 10)]}),
                   {"lost-write": 1, "unseen": 1}, {}),
    # a transaction whose outcome is unknown, one of its writes read: its other write must have committed
    "lost-write-info-txn": (lambda: base().txn(3, [("send", 1, 20, 1), ("send", 0, 21, 5)], "info")
                            .send(0, 1, 22, 2).poll(2, {0: [(0, 1), (1, 2), (2, 3), (4, 4), (5, 21)]})
                            .poll(1, {1: [(0, 10)]}).poll(4, {1: [(2, 22)]}),
                            {"lost-write": 1}, {}),
    "duplicate": (lambda: read_all(base()).poll(1, {1: [(0, 10), (1, 10)]}), {"duplicate": 1}, {}),
    "G1a": (lambda: read_all(base()).send(3, 1, 11, None, "fail").poll(1, {1: [(0, 10), (1, 11)]}), {"G1a": 1}, {}),
    "inconsistent-offsets": (lambda: read_all(base()).poll(1, {1: [(0, 99)]}), {"inconsistent-offsets": 1}, {}),
    "poll-skip": (lambda: read_all(base()).poll(1, {0: [(0, 1)]}).poll(1, {0: [(2, 3)]}), {"poll-skip": 1}, {}),
    "nonmonotonic-poll": (lambda: read_all(base()).poll(1, {0: [(0, 1), (1, 2)]}).poll(1, {0: [(1, 2)]}),
                          {"nonmonotonic-poll": 1}, {}),
    "int-poll-skip": (lambda: read_all(base()).poll(1, {0: [(0, 1), (2, 3)]}), {"int-poll-skip": 1}, {}),
    "int-nonmonotonic-poll": (lambda: read_all(base()).poll(1, {0: [(1, 2), (0, 1)]}),
                              {"int-nonmonotonic-poll": 1}, {}),
    "int-nonmonotonic-send": (lambda: read_all(base().txn(3, [("send", 1, 12, 2), ("send", 1, 13, 1)]), 1)
                              .poll(2, {1: [(1, 13), (2, 12)]}), {"int-nonmonotonic-send": 1}, {}),
    "nonmonotonic-send": (lambda: read_all(base().send(3, 1, 12, 2).send(3, 1, 13, 1))
                          .poll(1, {1: [(1, 13), (2, 12)]}), {"nonmonotonic-send": 1}, {}),
    "precommitted-read": (lambda: read_all(base().txn(3, [("send", 1, 12, 1), ("poll", {1: [(1, 12)]})]), 1),
                          {"precommitted-read": 1}, {}),
    "unseen": (lambda: read_all(base()).send(0, 1, 11, 1), {"unseen": 1}, {}),
    # allowed: Kafka's normal behaviour, reported but valid
    "int-send-skip": (lambda: read_all(base().txn(3, [("send", 1, 12, 1), ("send", 1, 13, 3)]).send(0, 1, 14, 2),
                                       1).poll(2, {1: [(1, 12), (2, 14), (3, 13)]}), {}, {"int-send-skip": 1}),
    "poll-skip-under-subscribe": (lambda: read_all(base("subscribe")).poll(1, {0: [(0, 1)]}).poll(1, {0: [(2, 3)]}),
                                  {}, {"poll-skip": 1}),
    "nonmonotonic-poll-under-subscribe": (lambda: read_all(base("subscribe")).poll(1, {0: [(0, 1), (1, 2)]})
                                          .poll(1, {0: [(0, 1)]}), {}, {"nonmonotonic-poll": 1}),
    "duplicate-plain": (lambda: read_all(base()).send(3, 1, 11, 2, client="plain")
                        .poll(1, {1: [(0, 10), (1, 11), (2, 11)]}), {}, {"duplicate-plain": 1}),
}


@pytest.mark.parametrize("name", [case(n) for n in CASES])
def test_each_anomaly_is_found_with_its_count_and_class(name):
    build, bad, allowed = CASES[name]
    result = check(build().lines)
    assert (result.counts(bad=True), result.counts(bad=False)) == (bad, allowed), result.text()
    assert result.valid == (not bad)


def test_the_exemptions_jepsen_makes():
    # a rebalance during the poll exempts the key from the internal checks
    h = read_all(base()).poll(1, {0: [(0, 1), (2, 3)]}, rebalance_log=[{"keys": [0]}])
    assert check(h.lines).counts() == {}
    # an assign that drops the key (or seeks to the beginning) restarts the process's order for it
    h = read_all(base()).poll(1, {0: [(0, 1)]}).via(1, "assign", keys=[1]).via(1, "assign", keys=[0]) \
        .poll(1, {0: [(2, 3)]})
    assert check(h.lines).counts() == {}
    h = read_all(base()).poll(1, {0: [(0, 1), (1, 2)]}).via(1, "assign", seek=True).poll(1, {0: [(0, 1)]})
    assert check(h.lines).counts() == {}
    # an unknown-outcome send nobody read is neither lost nor unseen; a failed one read by an info poll is no G1a
    h = read_all(base()).send(3, 1, 11, None, "info").send(3, 1, 12, None, "fail").poll(1, {1: [(1, 12)]}, "info")
    assert check(h.lines).counts() == {}


def test_pylogs_own_checks_take_the_harness_inputs():
    lines = read_all(base()).lines
    extras = Extras(replica_batches={"t-0": {0: [[0, 2, 0, 77]], 1: [[0, 2, 0, 77]], 2: [[0, 2, 1, 78]]},
                                     "t-1": {0: [[0, 0, 0, 5]], 1: [[0, 0, 0, 5]]}},
                    high_watermarks={("t", 0): 4, 1: 1},
                    hanging=["Topic t partition 1: producer 7 epoch 0 open since offset 3"])
    result = check(lines, extras)
    assert result.counts(bad=True) == {"replicas-diverged": 1, "read-above-high-watermark": 1,
                                       "hanging-transaction": 1}
    assert result.anomalies["read-above-high-watermark"][0]["offset"] == 4
    assert check(lines, Extras(divergences=["t-0: broker 2 differs"])).counts() == {"replicas-diverged": 1}


def test_a_history_file_round_trips(tmp_path):
    w = HistoryWriter(tmp_path / "h.jsonl", keys=[("t", 0)], seed=1)
    w.record({"type": "invoke", "process": 0, "f": "send", "value": [["send", 0, 1]]})
    w.record({"type": "ok", "process": 0, "f": "send", "value": [["send", 0, [5, 1]]]})
    w.record({"type": "invoke", "process": 1, "f": "poll", "value": [["poll"]]})
    w.record({"type": "ok", "process": 1, "f": "poll", "value": [["poll", {0: [[5, 1]]}]]})
    w.close()
    result = check(tmp_path / "h.jsonl")
    assert result.valid and result.counts() == {} and result.stats["values_read"] == 1
    (tmp_path / "bad.jsonl").write_text('{"type": "meta"}\nnot json\n')
    with pytest.raises(ValueError, match="line 2"):
        check(tmp_path / "bad.jsonl")
