"""The nemesis schedule is a function of the seed, and the partition shapes cut what they claim to."""

from __future__ import annotations

from pylog.chaos.nemesis import NEMESES, module
from pylog.chaos.nemesis.config import NemesisConfig, schedule
from pylog.chaos.nemesis.partition import bridge, complete


def test_a_seed_replays_the_same_schedule_and_each_nemesis_comes_first():
    cfg = NemesisConfig(seed=7, nemeses=["partition", "pause", "link"], faults=12)
    plan = schedule(cfg)
    assert plan == schedule(NemesisConfig(seed=7, nemeses=["partition", "pause", "link"], faults=12))
    assert plan != schedule(NemesisConfig(seed=8, nemeses=["partition", "pause", "link"], faults=12))
    assert sorted(name for name, _, _ in plan[:3]) == ["link", "partition", "pause"]
    assert len(plan) == 12 and all(kind in module(name).KINDS for name, kind, _ in plan)


def test_fewer_faults_than_nemeses_takes_a_prefix():
    assert len(schedule(NemesisConfig(seed=1, nemeses=list(NEMESES), faults=2))) == 2


def test_a_complete_cut_is_symmetric_and_a_bridge_sees_both_halves():
    g = complete(["b0"], ["b1", "zk1"])
    assert g == {"b0": {"b1", "zk1"}, "b1": {"b0"}, "zk1": {"b0"}}
    g = bridge(["a", "b", "c", "d", "e"])
    assert "c" not in g and g["a"] == {"d", "e"} and g["e"] == {"a", "b"}


def _args(*argv: str):
    from pylog.chaos.run import parser
    ap = parser()
    return ap, ap.parse_args(list(argv))


def test_the_command_line_builds_the_config_and_refuses_bad_input_with_one_line(capsys):
    import pytest

    from pylog.chaos.nemesis.cli import config

    ap, args = _args("--nemesis", "partition,zk", "--workload", "queue", "--faults", "9", "--seed", "4")
    cfg = config(ap, args, 4)
    assert (cfg.nemeses, cfg.workload, cfg.faults, cfg.zookeepers) == (["partition", "zk"], "queue", 9, 3)
    assert cfg.replay().startswith("scripts/chaos --nemesis partition,zk --workload queue --faults 9 --seed 4")
    ap, args = _args("--nemesis", "pause", "--workload", "ctp", "--members", "2", "--seed", "5")
    cfg = config(ap, args, 5)
    assert (cfg.workload, cfg.members) == ("ctp", 2) and cfg.replay().endswith("--members 2")
    for argv, message in ((["--nemesis", "partition,flood"], "unknown flood"),
                          (["--nemesis", "kill", "--workload", "groups", "--members", "0"],
                           "--members must be >= 1")):
        ap, args = _args(*argv)
        with pytest.raises(SystemExit):
            config(ap, args, 1)
        assert message in capsys.readouterr().err


def test_a_variant_named_on_the_command_line_is_the_only_one_scheduled(capsys):
    import pytest

    from pylog.chaos.nemesis.cli import config

    ap, args = _args("--nemesis", "partition:leader-zk,disk", "--faults", "6")
    cfg = config(ap, args, 2)
    assert cfg.uses("partition") and cfg.uses("disk") and not cfg.uses("clock")
    plan = schedule(cfg)
    assert {kind for name, kind, _ in plan if name == "partition"} == {"leader-zk"}
    ap, args = _args("--nemesis", "partition:everything")
    with pytest.raises(SystemExit):
        config(ap, args, 1)
    assert "unknown partition variant 'everything'" in capsys.readouterr().err
