"""Every parameter cccli can send to an endpoint pylog serves is accepted; others are refused by name."""

from __future__ import annotations

import pytest

import cruisecontrolclient.client.Endpoint as Endpoint
from pylog.balancer import params as P

SERVED = {**P.GET_ENDPOINTS, **P.POST_ENDPOINTS}
# cccli 1.1.3 offers --throttle-removed-broker on add_broker too; Cruise Control refuses it there, and so does pylog.
CCCLI_EXTRA = {("add_broker", "throttle_removed_broker")}


@pytest.mark.parametrize("endpoint", [e for e in Endpoint.AbstractEndpoint.__subclasses__() if e.name in SERVED],
                         ids=lambda e: e.name)
def test_cccli_parameters_are_accepted(endpoint):
    names = {p.name for p in endpoint.available_Parameters} - {n for e, n in CCCLI_EXTRA if e == endpoint.name}
    assert P.check(endpoint.name, {n: "true" for n in names}).keys() == {n.lower() for n in names}


def test_unknown_parameters_are_refused_and_names_are_case_insensitive():
    with pytest.raises(P.ParamError, match="throttle_removed_broker"):
        P.check("add_broker", {"brokerid": "3", "throttle_removed_broker": "true"})
    with pytest.raises(P.ParamError, match=r"Unrecognized endpoint parameters in rebalance request: \['bogus'\]"):
        P.check("rebalance", {"DryRun": "True", "bogus": "1"})
    assert P.check("rebalance", {"DryRun": "True"}) == {"dryrun": "True"}


def test_values():
    assert P.flag({"dryrun": "False"}, "dryrun", True) is False  # cccli sends Python's False
    assert P.flag({}, "dryrun", True) is True
    assert P.broker_ids({"brokerid": "3,1"}) == [1, 3]
    assert P.substates({"substates": "executor,monitor"}) == ["EXECUTOR", "MONITOR"]
    for bad in ({"brokerid": "a"}, {"brokerid": ""}):
        with pytest.raises(P.ParamError):
            P.broker_ids(bad)
    with pytest.raises(P.ParamError, match="Unsupported substates"):
        P.substates({"substates": "nope"})


def test_anomaly_types():
    assert P.anomaly_types({"enable_self_healing_for": "broker_failure"}, "enable_self_healing_for") == {
        "BROKER_FAILURE"}
    with pytest.raises(P.ParamError, match="unknown anomaly types"):
        P.anomaly_types({"enable_self_healing_for": "fire"}, "enable_self_healing_for")
