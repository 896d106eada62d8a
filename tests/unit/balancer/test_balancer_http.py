"""The REST transport on loopback, without a cluster: paths, 202 then the answer by session cookie or
User-Task-ID, Cruise Control's headers, refused parameters, json=false text."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from http.cookiejar import CookieJar

import pytest

from pylog.balancer.config import parse
from pylog.balancer.server import VERSION, serve
from pylog.balancer.service import Balancer


@pytest.fixture
def gate(monkeypatch):
    """State tasks wait for this event, so that a first answer is surely a 202."""
    event = threading.Event()
    original = Balancer._state
    monkeypatch.setattr(Balancer, "_state", lambda self, params, task: (event.wait(10), original(self, params, task))[1])
    return event


@pytest.fixture
def base():
    cfg = parse({"bootstrap.servers": "127.0.0.1:1", "webserver.http.port": "0",
                 "webserver.request.maxBlockTimeMs": "0"})
    httpd, thread = serve(Balancer(cfg))
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/kafkacruisecontrol"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


def call(opener, url, method="GET", headers=None):
    try:
        r = opener.open(urllib.request.Request(url, method=method, headers=headers or {}), timeout=10)
    except urllib.error.HTTPError as err:
        r = err
    return r.status, dict(r.headers), r.read().decode()


def test_a_task_answers_202_then_its_result_in_the_same_session(base, gate):
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()))
    url = f"{base}/state?substates=executor,analyzer&json=true"
    status, headers, body = call(opener, url)
    assert status == 202 and "progress" in json.loads(body) and headers["Cruise-Control-Version"] == VERSION
    task_id = headers["User-Task-ID"]
    again = call(opener, url)
    assert (again[0], again[1]["User-Task-ID"]) == (202, task_id)  # still running: the same task, by cookie
    gate.set()
    for _ in range(200):
        status, headers, body = call(opener, url)
        if status == 200:
            break
    assert status == 200 and headers["User-Task-ID"] == task_id  # the same task, found by the cookie
    state = json.loads(body)
    assert state["ExecutorState"]["state"] == "NO_TASK_IN_PROGRESS" and state["AnalyzerState"]["isProposalReady"]
    # Once answered, the same request is a new task.
    assert call(opener, url)[1]["User-Task-ID"] != task_id
    listed = json.loads(call(opener, f"{base}/user_tasks?json=true")[2])["userTasks"]
    assert [t["UserTaskId"] for t in listed][0] == task_id and listed[0]["Status"] == "Completed"


def test_user_task_id_header_finds_a_task_without_cookies(base, gate):
    plain = urllib.request.build_opener()
    url = f"{base}/state?substates=executor&json=true"
    status, headers, _ = call(plain, url)
    assert status == 202
    gate.set()
    for _ in range(200):
        status, again, _ = call(plain, url, headers={"User-Task-ID": headers["User-Task-ID"]})
        if status == 200:
            break
    assert status == 200 and again["User-Task-ID"] == headers["User-Task-ID"]
    status, _, body = call(plain, url, headers={"User-Task-ID": "no-such-task"})
    assert status == 400 and "no-such-task" in json.loads(body)["errorMessage"]


def test_refusals(base):
    plain = urllib.request.build_opener()
    status, _, body = call(plain, f"{base}/rebalance?dryrun=true&bogus=1&json=true", "POST")
    assert status == 400 and json.loads(body)["errorMessage"].endswith(
        "Unrecognized endpoint parameters in rebalance request: ['bogus'].")
    assert call(plain, f"{base}/rebalance?json=true")[0] == 404  # rebalance is a POST
    assert call(plain, f"{base}/nope?json=true")[0] == 404
    status, _, body = call(plain, f"{base}/admin?enable_self_healing_for=maintenance_event&json=true", "POST")
    assert status == 400 and "does not detect ['MAINTENANCE_EVENT']" in body


def test_json_false_answers_text(base):
    status, headers, body = call(urllib.request.build_opener(), f"{base}/stop_proposal_execution", "POST")
    assert status == 200 and headers["Content-Type"] == "text/plain"
    assert body == "message: No ongoing proposal execution to stop.\nversion: 1\n"
