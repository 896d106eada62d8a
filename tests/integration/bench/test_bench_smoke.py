"""The produce/consume benchmarks run end to end with tiny sizes (figures are not checked: no timing here)."""

import pytest

from pylog.bench import consume, produce

pytestmark = pytest.mark.integration


def _cells(row):
    return [c for c in row if isinstance(c, (int, float))]


def test_produce_bench_measures_pylog_and_the_mock(zk_connect):
    rows = produce.run(records=3000, reps=1, scenarios=["1m"], loops=["asyncio"], value_size=100, with_mock=True,
                       prime_mb=0, zk_connect=zk_connect)
    assert [r[1] for r in rows] == ["pylog/asyncio", "mock (C)"]
    pylog, mock = rows
    assert all(v > 0 for v in _cells(pylog)[:2]) and all(v > 0 for v in _cells(mock)[:2])  # records/s, MB/s
    assert float(pylog[-1]) > 0 and mock[-1] == "1.00"  # the ratio column
    assert float(pylog[4].split()[0]) >= 0  # CPU-s/GB "(sys)" cell parses


def test_consume_bench_reads_back_what_it_wrote(zk_connect):
    rows = consume.run(records=4000, reps=1, loops=["asyncio"], value_size=100, with_mock=True,
                       zk_connect=zk_connect, window=2000)
    assert [(r[0], r[1]) for r in rows] == [("window (2,000 records, re-read)", "pylog/asyncio"),
                                            ("window (2,000 records, re-read)", "mock (C)"),
                                            ("full log (4,000 records)", "pylog/asyncio")]
    assert all(_cells(r)[0] > 0 for r in rows)


def test_idempotence_bench_compares_both_producers_on_one_broker(zk_connect):
    from pylog.bench import idempotence
    rows = idempotence.run(records=3000, reps=1, scenarios=["16k"], value_size=100, prime_mb=0, zk_connect=zk_connect)
    assert [r[1:3] for r in rows] == [[server, mode] for server in ("pylog", "mock")
                                      for mode in ("plain", "plain-1", "idempotent")]
    assert all(v > 0 for r in rows for v in _cells(r)[:2])
    assert rows[0][-2] == "1.00" and rows[1][-1] == "1.00" and float(rows[2][-1]) > 0


def test_consume_bench_reads_every_partition_of_a_multi_partition_window(zk_connect):
    rows = consume.run(records=2000, reps=1, loops=["asyncio"], value_size=100, with_mock=True,
                       zk_connect=zk_connect, window=500, partitions=2)
    assert [(r[0], r[1]) for r in rows] == [("window (500 records x 2 partitions, re-read)", "pylog/asyncio"),
                                            ("window (500 records x 2 partitions, re-read)", "mock (C)"),
                                            ("full log (2,000 records)", "pylog/asyncio")]
    assert all(_cells(r)[0] > 0 for r in rows)


def test_many_clients_bench_moves_every_record_through_each_target(zk_connect):
    from pylog.bench import many_clients
    rows = many_clients.run(reps=1, partitions=4, producers=2, consumers=2, records=300, value_size=100,
                            setups=("mock", "rf1", "rf1x2", "rf3"), zk_connect=zk_connect, prime_mb=0)
    assert [r[:2] for r in rows] == [[phase, server] for phase in ("produce", "consume")
                                     for server in ("mock", "pylog RF 1", "pylog RF 1, 2 brokers", "pylog RF 3")]
    assert all(r[2] > 0 for r in rows)
    assert [r[4] for r in rows if r[1] == "mock"] == ["1.00", "1.00"]
    assert all(float(r[5]) > 0 for r in rows if r[1] in ("pylog RF 1, 2 brokers", "pylog RF 3"))
    assert all(float(r[6]) >= 0 for r in rows)  # servers' cores busy: CPU ticks may round to 0 at these sizes


def test_partition_cost_bench_serves_each_size(zk_connect):
    from pylog.bench import partition_cost
    rows = partition_cost.run([1, 4], rounds=1, partition_ops=40, zk_connect=zk_connect)
    assert [r[:2] for r in rows] == [["fetch", 1], ["fetch", 4], ["produce", 1], ["produce", 4]]
    assert all(r[4] > 0 for r in rows)


def test_latency_bench_times_every_record_end_to_end(zk_connect):
    from pylog.bench import latency
    res = latency.run_setup("rf1", rate=300, seconds=3, value_size=1024, warmup=1, zk_connect=zk_connect)
    assert res["seen"] == res["sent"] == 900 and res["e2e"]["n"] == res["ack"]["n"] == 600  # after 1 s warm-up
    e = res["e2e"]
    assert 0 < e["p50"] <= e["p99"] <= e["p999"] <= e["max"]
    row = latency.row(res)
    assert row[0] == "pylog/asyncio, RF 1, acks=1" and row[-2] == "900"


def test_partitions_scale_bench_restarts_the_broker_both_ways(zk_connect):
    from pylog.bench import partitions_scale
    r = partitions_scale.run_count(30, per_topic=10, batch=2, timeout=120, zk_connect=zk_connect)
    assert r["loaded"]["fds"] >= 30  # at least one segment file open per partition
    assert r["loaded"]["rss"] > r["base"]["rss"] > 0
    assert all(r[k] > 0 for k in ("create_s", "metadata_s", "shutdown_s", "start_clean_s", "start_kill_s"))
    assert partitions_scale.row(r)[0] == 30


def test_request_cost_bench_answers_every_kind_without_error(zk_connect):
    # Setup fails on any error answer (it decodes each kind's first response), so rows mean real requests.
    from pylog.bench import request_cost
    rows = request_cost.run(list(request_cost.KINDS), n=20, rounds=1, records_per_batch=1, zk_connect=zk_connect)
    assert [r[0] for r in rows] == list(request_cost.KINDS)
    assert all(float(r[1].split()[0]) > 0 for r in rows)  # "total (sys)" cells: some broker CPU per request
