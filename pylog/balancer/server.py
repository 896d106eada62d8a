"""The REST transport: Cruise Control's paths, headers, 202 progress and session binding over http.server."""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from http.cookies import SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

from pylog.balancer import params as P
from pylog.balancer.service import ASYNC, Balancer
from pylog.balancer.tasks import Reply, TooManyTasks, UserTask, error_body

log = logging.getLogger("pylog.balancer")
# cccli treats a non-202 answer as final only from Cruise Control 2.0.61 on; pylog speaks that protocol.
VERSION = "2.5.142"
COOKIE = "JSESSIONID"


def render_text(body: dict, indent: str = "") -> str:
    """The json=false form: the same fields, one per line (Cruise Control's text layouts are not kept)."""
    lines = []
    for key, value in body.items():
        if isinstance(value, dict):
            lines.append(f"{indent}{key}:")
            lines.append(render_text(value, indent + "  "))
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            lines.append(f"{indent}{key}:")
            lines += [render_text(v, indent + "  - ") for v in value]
        else:
            lines.append(f"{indent}{key}: {value}")
    return "\n".join(lines)


class Handler(BaseHTTPRequestHandler):
    """One HTTP request; the Balancer is the server's."""

    server: "BalancerHttpServer"
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt: str, *args: object) -> None:
        log.info("%s %s", self.address_string(), fmt % args)

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self._serve("GET")

    def do_POST(self) -> None:  # noqa: N802
        if int(self.headers.get("Content-Length") or 0):
            self.rfile.read(int(self.headers["Content-Length"]))
        self._serve("POST")

    def _serve(self, method: str) -> None:
        url = urlsplit(self.path)
        prefix = self.server.balancer.cfg.url_prefix + "/"
        endpoint = url.path[len(prefix):].lower() if url.path.startswith(prefix) else ""
        table = P.GET_ENDPOINTS if method == "GET" else P.POST_ENDPOINTS
        raw = dict(parse_qsl(url.query, keep_blank_values=True))
        try:
            as_json = P.flag({k.lower(): v for k, v in raw.items()}, "json", False)
        except P.ParamError:
            as_json = False
        if endpoint not in table:
            self._send(Reply(404, error_body(LookupError(f"Unsupported {method} endpoint {url.path}"))), as_json)
            return
        try:
            params = P.check(endpoint, raw)
        except P.ParamError as exc:
            self._send(Reply(400, error_body(exc)), as_json)
            return
        if endpoint == "user_tasks":
            self._send(Reply(200, self.server.balancer.user_tasks(params)), as_json)
        elif endpoint in ("pause_sampling", "resume_sampling"):
            self._send(Reply(200, self.server.balancer.sampling(endpoint, params)), as_json)
        elif endpoint == "stop_proposal_execution":
            self._send(Reply(200, self.server.balancer.stop_execution()), as_json)
        elif endpoint == "admin":
            try:
                self._send(Reply(200, self.server.balancer.admin(params)), as_json)
            except P.ParamError as exc:
                self._send(Reply(400, error_body(exc)), as_json)
        else:
            assert endpoint in ASYNC
            self._serve_task(endpoint, url, params, as_json)

    def _session(self) -> tuple[str, bool]:
        cookie = SimpleCookie(self.headers.get("Cookie") or "")
        if COOKIE in cookie:
            return cookie[COOKIE].value, False
        return uuid.uuid4().hex, True

    def _serve_task(self, endpoint: str, url, params: dict, as_json: bool) -> None:
        b = self.server.balancer
        sid, new_session = self._session()
        key = (sid, self.command, url.path, tuple(sorted(params.items())))
        asked = self.headers.get("User-Task-ID")
        task = b.tasks.find(asked, key)
        if asked and task is None:
            self._send(Reply(400, error_body(LookupError(f"No user task with User-Task-ID {asked}"))), as_json)
            return
        if task is None:
            try:
                task = b.tasks.create(endpoint, f"{self.command} {self.path}", self.client_address[0], key,
                                      b.work(endpoint, params))
            except TooManyTasks as exc:
                self._send(Reply(500, error_body(exc)), as_json)
                return
        task.done.wait(b.cfg["webserver.request.maxBlockTimeMs"] / 1000)
        if task.done.is_set():
            b.tasks.release(key)
            self._send(task.reply or Reply(500, error_body(RuntimeError("task ended without a reply"))), as_json,
                       task, sid if new_session else None)
        else:
            self._send(Reply(202, task.progress()), as_json, task, sid if new_session else None)

    def _send(self, reply: Reply, as_json: bool, task: UserTask | None = None, new_sid: str | None = None) -> None:
        data = (json.dumps(reply.body) if as_json else render_text(reply.body) + "\n").encode()
        self.send_response(reply.status)
        self.send_header("Content-Type", "application/json" if as_json else "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cruise-Control-Version", VERSION)
        self.send_header("Cruise-Control-Commit_Id", "pylog")
        if task is not None:
            self.send_header("User-Task-ID", task.task_id)
        if new_sid is not None:
            self.send_header("Set-Cookie", f"{COOKIE}={new_sid}; Path=/")
        self.end_headers()
        self.wfile.write(data)


class BalancerHttpServer(ThreadingHTTPServer):
    """The HTTP server of one Balancer."""

    daemon_threads = True

    def __init__(self, balancer: Balancer) -> None:
        self.balancer = balancer
        cfg = balancer.cfg
        super().__init__((cfg["webserver.http.address"], cfg["webserver.http.port"]), Handler)


def serve(balancer: Balancer) -> tuple[BalancerHttpServer, threading.Thread]:
    """Start serving in a thread; returns the server (its port is server.server_address[1])."""
    httpd = BalancerHttpServer(balancer)
    thread = threading.Thread(target=httpd.serve_forever, name="balancer-http", daemon=True)
    thread.start()
    return httpd, thread


def wait_for_execution(balancer: Balancer, timeout_s: float) -> bool:
    """Wait for the running execution (if any) to end; True if none is left."""
    deadline = time.monotonic() + timeout_s
    while balancer.executor.busy() and time.monotonic() < deadline:
        time.sleep(0.1)
    return not balancer.executor.busy()
