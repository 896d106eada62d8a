"""`scripts/chaos --ctp`: the consume-transform-produce application of KIP-447 under faults, checked for exactly-once.

A groups run (groups.py: three brokers, the acks=all producer of numbered input records, member
processes, kill -9s of brokers and members) whose members are ctp_worker.py processes: each reads
the input topic as read_committed and writes every record transformed to the output topic inside a
transaction that also commits the consumed offsets (send_offsets_to_transaction). Besides the
group's coordinator and the controller, the faults kill the workers' transaction coordinators and
partition leaders. After the input is drained (the group's committed offsets reach its high
watermarks), a read_committed consumer reads the output, and the named checks below judge it
against the input topic as it was written (read back in full, not only what was acknowledged), and
the in-sync replicas of both topics are compared batch for batch up to their high watermarks.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable

from pylog.chaos import txn as txn_chaos
from pylog.chaos.ctp_worker import transactional_id
from pylog.chaos.run import TOPIC
from pylog.chaos.verify import divergences, find_hanging, read_back, replica_checks
from pylog.coordinator.ownership import partition_for

OUT_TOPIC = "chaos-out"
TXN_STATE_PARTITIONS = 5
KINDS = ("kill-txn-coordinator", "kill-coordinator", "kill-leader", "kill-controller", "kill-random", "pause")
TXN_OVERRIDES = {"transaction.state.log.num.partitions": str(TXN_STATE_PARTITIONS),
                 "transaction.state.log.replication.factor": "3"}


@dataclass
class CtpVerdict:
    """What the exactly-once checks found; `findings` empty means the run passed."""

    findings: list[str] = field(default_factory=list)
    inputs: int = 0  # records in the input topic
    outputs: int = 0  # records a read_committed consumer got from the output topic
    committed_txns: int = 0  # commit_transaction returned
    aborted_txns: int = 0  # abort_transaction returned
    worker_errors: Counter = field(default_factory=Counter)
    replica_batches: dict[str, int] = field(default_factory=dict)  # topic -> batches compared across its ISRs

    @property
    def ok(self) -> bool:
        """No finding."""
        return not self.findings


def parse_workers(logs: Iterable[str]) -> tuple[set[str], set[str], Counter]:
    """(committed transactions, aborted transactions, errors by name) from the workers' log texts."""
    committed, aborted, errors = set(), set(), Counter()
    for text in logs:
        for line in text.splitlines():
            parts = line.split()
            if len(parts) >= 2 and parts[0] == "C":
                committed.add(parts[1])
            elif len(parts) >= 2 and parts[0] == "A":
                aborted.add(parts[1])
            elif len(parts) >= 3 and parts[0] == "E":
                errors[parts[2]] += 1
    return committed, aborted, errors


def check_ctp(inputs: dict[int, dict[int, int]], output: dict[int, list[str]], committed: dict[int, int],
              aborted: set[str]) -> list[str]:
    """The named anomalies: `inputs` is partition -> {offset: seq}, `output` the read_committed values per
    output partition in offset order, `committed` the group's final offsets on the input topic."""
    findings: list[str] = []
    count: Counter = Counter()
    wrong, aborted_read = [], []
    for q, values in sorted(output.items()):
        last = -1
        for v in values:
            p, off, seq, txn = v.split(":", 3)
            key = (int(p), int(off))
            if txn in aborted:
                aborted_read.append((key, txn))
            if inputs.get(key[0], {}).get(key[1]) != int(seq) or key[0] != q:
                wrong.append((q, v))  # counted as no copy of any input record
                continue
            count[key] += 1
            if count[key] == 1:
                if key[1] < last:
                    findings.append(f"reordered-within-partition: output partition {q} has input offset {key[1]} "
                                    f"after {last}")
                last = max(last, key[1])
    lost = [(p, o) for p, recs in sorted(inputs.items()) for o in sorted(recs) if count[(p, o)] == 0]
    if lost:
        findings.append(f"lost: {len(lost)} input records not in the output, first (partition, offset) {lost[:10]}")
    dups = sorted(k for k, n in count.items() if n > 1)
    if dups:
        findings.append(f"duplicated: {len(dups)} input records in the output more than once, first {dups[:10]}")
    if aborted_read:
        findings.append(f"aborted-read: {len(aborted_read)} records of aborted transactions visible, "
                        f"first {aborted_read[:5]}")
    if wrong:
        findings.append(f"corrupted: {len(wrong)} output records match no input record, first {wrong[:5]}")
    skipped = [(p, o) for p, o in lost if o < committed.get(p, -1)]
    if skipped:
        findings.append(f"offsets-committed-without-writes: {len(skipped)} input records below the committed "
                        f"offset not in the output, first {skipped[:10]}")
    return findings


def txn_coordinator(zk, client_id: str) -> int:
    """The broker leading the __transaction_state partition of worker `client_id`'s transactional.id."""
    part = partition_for(transactional_id(client_id), TXN_STATE_PARTITIONS)
    st = zk.get_partition_state("__transaction_state", part)
    return st.leader if st is not None and st.leader >= 0 else -1


def verify(bootstrap: str, partitions: int, worker_logs: Iterable[str], final: dict[int, int]) -> CtpVerdict:
    """Read the input in full and the output as read_committed, then run every check."""
    v = CtpVerdict()
    committed, aborted, v.worker_errors = parse_workers(worker_logs)
    v.committed_txns, v.aborted_txns = len(committed), len(aborted)
    inputs = {p: recs for p, (_, recs) in read_back(bootstrap, TOPIC, partitions).items()}
    v.inputs = sum(len(r) for r in inputs.values())
    try:
        output = txn_chaos.read_committed(bootstrap, OUT_TOPIC, partitions, decode=bytes.decode)
    except TimeoutError as exc:
        v.findings.append(f"hanging: {exc}")
        return v
    v.outputs = sum(len(o) for o in output.values())
    v.findings += check_ctp(inputs, output, final, aborted)
    v.findings += [f"hanging: find-hanging reports {row}" for row in find_hanging(bootstrap, OUT_TOPIC)]
    return v


def check_replicas(v: CtpVerdict, bootstrap: str, cluster: Any, zk: Any, partitions: int) -> None:
    """replicas-diverged: the in-sync replicas of the input and output topics differ below the high watermark."""
    for topic in (TOPIC, OUT_TOPIC):
        checks = replica_checks(bootstrap, cluster, zk, topic, partitions)
        v.replica_batches[topic] = sum(c.batches for c in checks.values())
        v.findings += divergences(topic, checks)
