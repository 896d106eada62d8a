"""Which anomalies are safety violations and which are Kafka's normal behaviour, as Jepsen's
`allowed-error-types` decides (jepsen/tests/kafka.clj), plus pylog's own checks.

- Always allowed: `int-send-skip` (Kafka transactions do not isolate writes: another producer's records land
  between one transaction's sends; Jepsen's G0 cycles come from the same fact and are allowed too, though this
  port builds no Elle graph).
- Allowed under subscribe: `poll-skip` and `nonmonotonic-poll` between two operations of a process that
  consumes through a group: a rebalance moves a partition away and back, and the process resumes from the
  group's committed offset, which may be ahead (another member read on) or behind (uncommitted reads are
  read again). Under assign, nothing moves partitions, so both are bad.
- pylog's `duplicate-plain`: a value at two offsets whose writer is a plain (non-idempotent) producer:
  librdkafka retries a batch whose acknowledgement was lost, which is at-least-once by design. Jepsen runs only
  idempotent producers, so its `duplicate` is always bad; here it names the idempotent and transactional writers.
- `unseen` counts values sent by ok operations that no poll returned. It is bad (Jepsen), because the run's
  final drain reads every partition from the beginning after the faults healed; a value still unseen then is
  lost or stuck behind a hanging transaction.
- Everything else is bad.
"""

from __future__ import annotations

ANOMALIES = ("lost-write", "duplicate", "G1a", "inconsistent-offsets", "poll-skip", "int-poll-skip",
             "nonmonotonic-poll", "int-nonmonotonic-poll", "int-send-skip", "int-nonmonotonic-send",
             "nonmonotonic-send", "precommitted-read", "unseen", "duplicate-plain",
             "replicas-diverged", "read-above-high-watermark", "hanging-transaction")
ALWAYS_ALLOWED = frozenset({"int-send-skip", "duplicate-plain"})
ALLOWED_UNDER_SUBSCRIBE = frozenset({"poll-skip", "nonmonotonic-poll"})


def is_bad(name: str, case: dict) -> bool:
    """Whether one reported case is a safety violation (True) or the protocol's normal behaviour (False)."""
    if name in ALWAYS_ALLOWED:
        return False
    if name in ALLOWED_UNDER_SUBSCRIBE:
        return case.get("via") != "subscribe"
    return True
