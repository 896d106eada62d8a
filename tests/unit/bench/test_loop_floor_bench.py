"""scripts/bench loop-floor runs both server shapes on both loops and reports a positive CPU figure for each."""

from pylog.bench import loop_floor


def test_every_shape_and_loop_gets_a_figure(capsys):
    assert loop_floor.main(["--requests", "50", "--rounds", "1"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| direct") or
            line.startswith("| tasked")]
    assert [r.split("|")[1].strip() for r in rows] == ["direct", "tasked"]
    assert all(float(cell) > 0 for r in rows for cell in r.split("|")[2:4])
