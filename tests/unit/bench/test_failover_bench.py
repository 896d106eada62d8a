"""The controller-failover benchmark reads its timeline off broker and ZooKeeper log lines and reports medians."""

import datetime as dt

import pytest

from pylog.bench import failover


def test_log_lines_of_brokers_and_zookeeper_give_their_times(tmp_path):
    log = tmp_path / "x.log"
    log.write_text("[2026-11-29 00:40:44,100] INFO Broker 1 is leader of t-0 at epoch 1 (pylog.state.change)\n"
                   "2026-11-29 00:40:44,171 [SessionTracker] INFO ZooKeeperServer - Expiring session 0x1a, timeout\n"
                   "[2026-11-29 00:40:45,000] INFO Broker 1 is leader of t-0 at epoch 2 (pylog.state.change)\n")
    stamp = dt.datetime(2026, 11, 29, 0, 40, 44, 171000).timestamp()
    assert failover._first_line_after(log, 0, r"Expiring session 0x1a,") == pytest.approx(stamp)
    first = log.read_text().index("\n") + 1  # only lines after the offset count
    assert failover._first_line_after(log, first, r"is leader of t-0 ") == pytest.approx(stamp + 0.829)
    assert failover._first_line_after(log, 0, r"is the controller") is None


def test_rows_split_each_case_into_steps_and_compare_the_controller_case():
    def r(case, acked, expired, acting, leads):
        return failover.Round(case, 0, acked, expired, acting, None, leads)
    rounds = [r("leader", 6.2, 5.5, 5.5, 5.6), r("controller", 13.0, 5.9, 6.0, 6.1),
              r("leader", 6.4, 5.7, 5.7, 5.8), r("controller", 7.0, 6.0, 6.1, 6.3)]
    a, b = failover.rows(rounds)
    assert a == ["(a) leader, not the controller", 2, "5.60", "0.00", "0.10", "0.10", "0.60", "6.30", "6.40", "-"]
    assert b == ["(b) leader and controller", 2, "5.95", "0.10", "0.15", "0.25", "3.80", "10.00", "13.00", "+3.70"]


def test_reps_must_be_positive():
    with pytest.raises(SystemExit):
        failover.main(["--reps", "0"])
