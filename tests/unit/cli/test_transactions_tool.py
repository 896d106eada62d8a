"""pylog-transactions: Kafka's tables byte for byte, its error texts, exit 1 for bad input, and find-hanging's
rules over a fake admin (the real cluster runs are in tests/integration/cli/test_cli_transactions.py)."""

import pytest
from click.testing import CliRunner

from pylog.cli import transactions as tool
from pylog.cli.admin_client import ApiError
from pylog.cli.txn_admin import AbortSpec, ProducerState, TxnDescription
from pylog.cli.txn_hanging import find_hanging
from pylog.protocol.errors import ErrorCode

T = "\t"


def test_describe_producers_golden():
    states = [ProducerState(producer_id=1000, producer_epoch=3, last_sequence=4, last_timestamp=1700000000000,
                            coordinator_epoch=None, txn_start_offset=None),
              ProducerState(producer_id=1001, producer_epoch=0, last_sequence=0, last_timestamp=1700000000123,
                            coordinator_epoch=7, txn_start_offset=42)]
    assert tool.producers_table(states).split("\n") == [
        "ProducerId\tProducerEpoch\tLatestCoordinatorEpoch\tLastSequence\tLastTimestamp\tCurrentTransactionStartOffset\t",
        "1000      \t3            \t-1                    \t4           \t1700000000000\tNone                         \t",
        "1001      \t0            \t7                     \t0           \t1700000000123\t42                           \t",
    ]


def test_describe_golden_with_and_without_an_open_transaction():
    ongoing = TxnDescription(2, "Ongoing", 1000, 3, 60000, 1700000000000, (("a", 0), ("a", 1), ("b", 5)))
    assert tool.describe_table("app-1", ongoing, 1700000005000).split("\n") == [
        "CoordinatorId\tTransactionalId\tProducerId\tProducerEpoch\tTransactionState\tTransactionTimeoutMs\t"
        "CurrentTransactionStartTimeMs\tTransactionDurationMs\tTopicPartitions\t",
        "2            \tapp-1          \t1000      \t3            \tOngoing         \t60000               \t"
        "1700000000000                \t5000                 \ta-0,a-1,b-5    \t",
    ]
    empty = TxnDescription(0, "Empty", 1000, 3, 60000, None, ())
    assert tool.describe_table("app-1", empty, 1).split("\n")[1] == (
        "0            \tapp-1          \t1000      \t3            \tEmpty           \t60000               \t"
        "None                         \tNone                 \t               \t")


def test_list_golden_orders_by_coordinator():
    assert tool.list_table({1: [("b", 7, "Ongoing")], 0: [("a", 5, "CompleteCommit")]}).split("\n") == [
        "TransactionalId\tCoordinator\tProducerId\tTransactionState\t",
        "a              \t0          \t5         \tCompleteCommit  \t",
        "b              \t1          \t7         \tOngoing         \t",
    ]
    assert tool.list_table({}) == "TransactionalId\tCoordinator\tProducerId\tTransactionState\t"


def test_abort_spec_prints_as_javas():
    assert str(AbortSpec(("t", 0), 5, 1, 0)) == (
        "AbortTransactionSpec(topicPartition=t-0, producerId=5, producerEpoch=1, coordinatorEpoch=0)")


@pytest.mark.parametrize("args,message", [
    (["list"], "pylog-transactions: error: argument --bootstrap-server is required"),
    (["--bootstrap-server", "h:1", "describe"], "pylog-transactions: error: argument --transactional-id is required"),
    (["--bootstrap-server", "h:1", "describe-producers", "--topic", "t"],
     "pylog-transactions: error: argument --partition is required"),
    (["--bootstrap-server", "h:1", "abort", "--partition", "0"], "pylog-transactions: error: argument --topic is required"),
    (["--bootstrap-server", "h:1", "abort", "--topic", "t", "--partition", "0"],
     "The transaction to abort must be identified either with --start-offset (for brokers on 3.0 or above) or with "
     "--producer-id, --producer-epoch, and --coordinator-epoch (for older brokers)"),
    (["--bootstrap-server", "h:1", "abort", "--topic", "t", "--partition", "0", "--producer-id", "5"],
     "Missing required argument --producer-epoch"),
    (["--bootstrap-server", "h:1", "abort", "--topic", "t", "--partition", "0", "--producer-id", "5",
      "--producer-epoch", "0"], "Missing required argument --coordinator-epoch"),
    (["--bootstrap-server", "h:1", "find-hanging"],
     "The `find-hanging` command requires either --topic or --broker-id to limit the scope of the search"),
    (["--bootstrap-server", "h:1", "find-hanging", "--broker-id", "0", "--partition", "1"],
     "The --partition argument requires --topic to be provided"),
    (["--bootstrap-server", "h:1", "describe-producers", "--topic", "t", "--partition", "x"],
     "pylog-transactions: error: Invalid value for '--partition': 'x' is not a valid integer."),
    (["--bootstrap-server", "h:1", "nope"], "pylog-transactions: error: No such command 'nope'."),
])
def test_bad_input_is_one_clear_error_and_exit_1(args, message):
    result = CliRunner().invoke(tool.transactions, args)
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.splitlines()[-1] == message


def test_help_needs_no_bootstrap_server():
    result = CliRunner().invoke(tool.transactions, ["abort", "--help"])
    assert result.exit_code == 0 and "--start-offset" in result.stdout


NOW = 100 * 60000


def _state(pid, start, last_ts, epoch=0, coordinator_epoch=None):
    return ProducerState(pid, epoch, 3, last_ts, coordinator_epoch, start)


class FakeAdmin:
    """What find-hanging asks of TxnAdmin, from fixed answers."""

    def __init__(self, producers, listings, descriptions):
        self.producers, self.listings, self.descriptions = producers, listings, descriptions
        self.asked_pids = None

    def partitions(self, topics, broker_id):
        return sorted(tp for tp in self.producers if tp[0] in topics)

    def describe_producers(self, tps, broker_id=None):
        return {tp: self.producers[tp] for tp in tps}

    def list_transactions(self, producer_ids=()):
        self.asked_pids = list(producer_ids)
        return self.listings

    def describe_transaction(self, tid):
        d = self.descriptions[tid]
        if d is None:
            raise ApiError(ErrorCode.TRANSACTIONAL_ID_NOT_FOUND)
        return d


def _fail(message, cause=None):
    raise AssertionError(f"unexpected failure: {message}: {cause}")


def test_find_hanging_applies_kafkas_rules():
    old = NOW - 20 * 60000  # older than the 15 minute default
    producers = {
        ("t", 0): [_state(1, 10, old), _state(2, None, old), _state(3, 11, NOW - 60000)],  # 2: no open txn, 3: young
        ("t", 1): [_state(4, 12, old, coordinator_epoch=5), _state(5, 13, old), _state(6, 14, old)],
    }
    listings = {0: [("tx-4", 4, "Ongoing")], 1: [("tx-5", 5, "Ongoing"), ("tx-6", 6, "Ongoing")]}
    descriptions = {
        "tx-4": TxnDescription(0, "Ongoing", 4, 0, 60000, old, (("t", 1),)),  # still part of its transaction
        "tx-5": TxnDescription(1, "Ongoing", 5, 0, 60000, old, (("other", 0),)),  # moved on: hanging
        "tx-6": None,  # the id expired: hanging
    }
    admin = FakeAdmin(producers, listings, descriptions)
    rows = find_hanging(admin, "t", None, None, 15 * 60000, _fail, lambda: NOW)
    assert admin.asked_pids == [1, 4, 5, 6]
    assert tool.table(("Topic", "Partition", "ProducerId", "ProducerEpoch", "CoordinatorEpoch", "StartOffset",
                       "LastTimestamp", "Duration(min)"), rows).split("\n") == [
        "Topic\tPartition\tProducerId\tProducerEpoch\tCoordinatorEpoch\tStartOffset\tLastTimestamp\tDuration(min)\t",
        "t    \t0        \t1         \t0            \t-1              \t10         \t4800000      \t20           \t",
        "t    \t1        \t5         \t0            \t-1              \t13         \t4800000      \t20           \t",
        "t    \t1        \t6         \t0            \t-1              \t14         \t4800000      \t20           \t",
    ]
    # A shorter timeout makes the young transaction a candidate too; with nothing open, no lookups at all.
    assert [r[2] for r in find_hanging(admin, "t", 0, None, 0, _fail, lambda: NOW)] == ["1", "3"]
    quiet = FakeAdmin({("t", 0): [_state(2, None, old)]}, {}, {})
    assert find_hanging(quiet, "t", None, None, 0, _fail, lambda: NOW) == [] and quiet.asked_pids is None
