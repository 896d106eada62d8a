"""pylog-configs' entity arguments without a cluster: names pair with types by position, as in ConfigCommand."""

import pytest
from click.testing import CliRunner

from pylog.cli.configs import configs_command, ordered_names

ZK = ["--zookeeper", "127.0.0.1:1/none"]
BS = ["--bootstrap-server", "127.0.0.1:1"]


def test_names_keep_their_command_line_order():
    argv = ["--entity-type", "users", "--entity-default", "--entity-type", "clients", "--entity-name", "c"]
    assert ordered_names(argv, ("c",)) == ["", "c"]
    argv = ["--entity-type", "users", "--entity-name=u", "--entity-type", "clients", "--entity-default"]
    assert ordered_names(argv, ("u",)) == ["u", ""]
    # a name that looks like a flag is still the name; nothing after "--" is an option
    assert ordered_names(["--entity-name", "--entity-default", "--entity-default", "--", "--entity-name"],
                         ("--entity-default",)) == ["--entity-default", ""]


@pytest.mark.parametrize("args, error", [
    (["--entity-type", "users", "--entity-name", "u", "--entity-type", "users", "--entity-name", "v"],
     "Duplicate entity type(s) specified: users"),
    (["--entity-type", "users", "--entity-name", "u", "--entity-type", "topics", "--entity-name", "t"],
     "Only 'users' and 'clients' entity types may be specified together"),
    (["--entity-type", "users", "--entity-name", "u", "--entity-default"], "More entity names specified than "
                                                                          "entity types"),
])
def test_refusals_before_connecting(args, error):
    for target in (ZK, BS):
        r = CliRunner().invoke(configs_command, [*target, *args, "--describe"])
        assert (r.exit_code, r.stdout, r.stderr) == (1, "", error + "\n")
