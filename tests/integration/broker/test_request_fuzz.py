"""Every client API answers well-formed requests with random field values (empty or illegal names,
negative partitions, absurd sizes, garbage record bytes) with error codes: the connection stays open
and the broker logs no unexpected error. Control APIs (LeaderAndIsr, UpdateMetadata, StopReplica,
ControlledShutdown) are left out: they are fenced by epochs (test_control_requests.py)."""

import random

import pytest

from pylog.broker.handlers import advertised_ranges, load_all
from pylog.client.sync import KafkaClient
from pylog.protocol.api import ApiKey, api_name, request_class

from support.clients import create_topic
from support.fuzz import random_request

pytestmark = pytest.mark.integration

CONTROL = {ApiKey.LeaderAndIsr, ApiKey.UpdateMetadata, ApiKey.StopReplica, ApiKey.ControlledShutdown}
ROUNDS = 4


@pytest.mark.parametrize("seed", [1, 2])
def test_random_well_formed_requests_get_answers_not_disconnects(cluster, seed):
    load_all()
    create_topic(cluster.bootstrap, "fz", partitions=2)
    rnd = random.Random(seed)
    failures = []
    with KafkaClient(cluster.bootstrap, client_id="fuzz", timeout=20) as k:
        for key, lo, hi in advertised_ranges():
            if key in CONTROL:
                continue
            for version in range(lo, hi + 1):
                for _ in range(ROUNDS):
                    msg = random_request(request_class(key)[version], version, rnd)
                    no_answer = key == ApiKey.Produce and msg.acks == 0
                    try:
                        resp = k.call(key, lambda cls, v: msg, max_version=version, expect_response=not no_answer)
                    except Exception as exc:
                        failures.append(f"{api_name(key)} v{version}: {exc}: {str(msg)[:300]}")
                        continue
                    assert no_answer or resp is not None
    log = cluster.brokers[0].log_path.read_text()
    assert failures == [] and "Unexpected error" not in log, "\n".join(failures) + "\n" + log[-3000:]
