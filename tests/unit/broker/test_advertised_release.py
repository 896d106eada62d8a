"""What ApiVersions advertises, against a real Kafka release's set (README "Which Kafka pylog presents as").

The release table is kafka-python's record of what each Apache Kafka release's brokers answer to
ApiVersions (kafka/protocol/broker_version_data.py), the same data kafka-python negotiates with.
"""

import re
from pathlib import Path

from kafka.protocol.broker_version_data import BROKER_API_VERSIONS, infer_broker_version_from_api_versions

from pylog.broker.handlers import advertised_ranges, load_all
from pylog.protocol.api import api_name

PRESENTS_AS = (3, 9)  # the last ZooKeeper-mode release; its ranges contain every one of ours
# but KIP-848's APIs, served as Kafka 4.0 serves them (3.9 had only their early-access v0, KRaft only): v1 carries
# the regular-expression subscriptions librdkafka's group.protocol=consumer sends.
KIP_848 = {68: (4, 0), 69: (4, 0)}
README = Path(__file__).resolve().parents[3] / "README.md"


def _ours() -> dict[int, tuple[int, int]]:
    load_all()
    return {k: (lo, hi) for k, lo, hi in advertised_ranges()}


def test_every_advertised_range_is_within_kafka_3_9s():
    beyond = {}
    for k, r in _ours().items():
        release = BROKER_API_VERSIONS[KIP_848.get(k, PRESENTS_AS)]
        if k not in release or r[0] < release[k][0] or r[1] > release[k][1]:
            beyond[api_name(k)] = (r, release.get(k))
    # A version Kafka 3.9 does not have would make pylog something no real broker is.
    assert beyond == {}


def test_readme_names_the_release_and_what_kafka_python_infers():
    text = README.read_text()
    section = text[text.index("## Which Kafka pylog presents as"):]
    claimed = re.search(r"kafka-python \S+ infers \*\*Kafka (\d+)\.(\d+)\*\*", section)
    assert claimed, "the README section names the version kafka-python infers"
    assert tuple(map(int, claimed.groups())) == infer_broker_version_from_api_versions(_ours())
    assert f"Kafka {PRESENTS_AS[0]}.{PRESENTS_AS[1]}" in section


def test_transaction_version_2_adds_only_kafka_4_0s_produce_12_end_txn_5_and_txn_offset_commit_5():
    """KIP-890 part 2's versions are served while transaction.version 2 is finalized, and only then."""
    load_all()
    at_tv2 = {k: (lo, hi) for k, lo, hi in advertised_ranges({"transaction.version": 2})}
    at_tv1 = {k: (lo, hi) for k, lo, hi in advertised_ranges({"transaction.version": 1})}
    changed = {api_name(k): r[1] for k, r in at_tv2.items() if r != _ours()[k]}
    assert changed == {"Produce": 12, "EndTxn": 5, "TxnOffsetCommit": 5}
    assert all(r[1] <= BROKER_API_VERSIONS[(4, 0)][k][1] for k, r in at_tv2.items() if api_name(k) in changed)
    assert at_tv1 == _ours()
