"""The broker's seams stay narrow (issue 22): no import circle among its modules, and only the socket server,
which hands the broker to request handlers, takes the whole broker in its constructor."""

from seam_figures import cycles, whole_broker_takers


def test_no_import_cycle_among_the_broker_s_modules():
    assert cycles(runtime_only=False) == []


def test_parts_take_their_collaborators_not_the_broker():
    assert whole_broker_takers() == ["pylog.broker.server.SocketServer"]
