"""User tasks: Cruise Control's asynchronous request protocol.

A long request runs as a task in its own thread. The HTTP call waits up to
webserver.request.maxBlockTimeMs; a task still running answers 202 with its progress, and is found
again by its User-Task-ID header or by repeating the identical request (same session cookie, path and
parameters) within webserver.session.maxExpiryTimeMs, which is how cccli polls.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

ACTIVE, IN_EXECUTION, COMPLETED, COMPLETED_WITH_ERROR = "Active", "InExecution", "Completed", "CompletedWithError"
COMPLETED_KEPT = 100  # finished tasks listed by user_tasks


class TooManyTasks(RuntimeError):
    """max.active.user.tasks are already running."""


@dataclass
class Reply:
    """A finished task's HTTP answer."""

    status: int
    body: dict


@dataclass
class UserTask:
    """One request being served."""

    task_id: str
    endpoint: str
    url: str
    client: str
    start_ms: int
    steps: list[dict] = field(default_factory=list)
    reply: Reply | None = None
    done: threading.Event = field(default_factory=threading.Event)
    execution: Callable[[], bool] | None = None  # True while the execution it started still runs

    def step(self, name: str, description: str) -> None:
        """Record the operation step the task has reached (shown in 202 progress)."""
        now = int(time.time() * 1000)
        if self.steps:
            self.steps[-1]["time-in-ms"] = now - self.steps[-1]["_start"]
            self.steps[-1]["completionPercentage"] = 100.0
        self.steps.append({"step": name, "description": description, "time-in-ms": 0,
                           "completionPercentage": 0.0, "_start": now})

    def status(self) -> str:
        """Active, InExecution, Completed or CompletedWithError."""
        if not self.done.is_set():
            return ACTIVE
        if self.reply is not None and self.reply.status >= 400:
            return COMPLETED_WITH_ERROR
        return IN_EXECUTION if self.execution is not None and self.execution() else COMPLETED

    def progress(self) -> dict:
        """The 202 body."""
        now = int(time.time() * 1000)
        steps = [{k: v for k, v in s.items() if k != "_start"} for s in self.steps]
        if self.steps and not self.done.is_set():
            steps[-1]["time-in-ms"] = now - self.steps[-1]["_start"]
        return {"progress": [{"operation": self.endpoint, "operationProgress": steps}], "version": 1}


class UserTaskManager:
    """Tasks by id and by session key; runs each in a thread."""

    def __init__(self, max_active: int, session_expiry_ms: int) -> None:
        self.max_active = max_active
        self.session_expiry_ms = session_expiry_ms
        self.tasks: dict[str, UserTask] = {}
        self._sessions: dict[tuple, tuple[str, float]] = {}
        self._lock = threading.Lock()

    def find(self, task_id: str | None, session_key: tuple | None) -> UserTask | None:
        """The task named by the header, else the one bound to this session and request."""
        with self._lock:
            if task_id:
                return self.tasks.get(task_id)
            if session_key is None:
                return None
            bound = self._sessions.get(session_key)
            if bound is None or time.monotonic() - bound[1] > self.session_expiry_ms / 1000:
                self._sessions.pop(session_key, None)
                return None
            return self.tasks.get(bound[0])

    def release(self, session_key: tuple | None) -> None:
        """Unbind a session once its final answer was sent: the same request again is a new task."""
        with self._lock:
            self._sessions.pop(session_key, None)

    def create(self, endpoint: str, url: str, client: str, session_key: tuple | None,
               work: Callable[[UserTask], Reply]) -> UserTask:
        """Start a task running `work`; TooManyTasks when max.active.user.tasks are running."""
        with self._lock:
            active = sum(1 for t in self.tasks.values() if not t.done.is_set())
            if active >= self.max_active:
                raise TooManyTasks(f"There are already {active} active user tasks, which has reached the "
                                   f"servlet capacity.")
            task = UserTask(str(uuid.uuid4()), endpoint, url, client, int(time.time() * 1000))
            self.tasks[task.task_id] = task
            if session_key is not None:
                self._sessions[session_key] = (task.task_id, time.monotonic())
            self._trim()
        threading.Thread(target=self._run, args=(task, work), name=f"task-{task.task_id}", daemon=True).start()
        return task

    def _trim(self) -> None:
        finished = [t for t in self.tasks.values() if t.done.is_set()]
        for t in finished[:max(0, len(finished) - COMPLETED_KEPT)]:
            del self.tasks[t.task_id]

    @staticmethod
    def _run(task: UserTask, work: Callable[[UserTask], Reply]) -> None:
        try:
            task.reply = work(task)
        except Exception as exc:  # every failure becomes Cruise Control's error body, never a dead thread
            task.reply = Reply(500, error_body(exc))
        finally:
            task.done.set()

    def listing(self, ids: set[str] | None, endpoints: set[str] | None) -> dict:
        """The user_tasks body."""
        rows = []
        for t in sorted(self.tasks.values(), key=lambda t: t.start_ms):
            if (ids and t.task_id not in ids) or (endpoints and t.endpoint not in endpoints):
                continue
            rows.append({"UserTaskId": t.task_id, "RequestURL": t.url, "ClientIdentity": t.client,
                         "StartMs": str(t.start_ms), "Status": t.status()})
        return {"userTasks": rows, "version": 1}


def error_body(exc: BaseException) -> dict:
    """Cruise Control's error body."""
    return {"errorMessage": f"{type(exc).__name__}: {exc}", "stackTrace": "", "version": 1}
