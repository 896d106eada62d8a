"""Replica moves between the log dirs of a broker: the `log_dirs` of a reassignment JSON (ReassignPartitionsCommand).

--execute starts them after the partition reassignments (executeMoves: AlterReplicaLogDirs, retried
every 100 ms while a replica does not exist on its new broker yet, up to --timeout); --verify reports
each one (findLogDirMoveStates / replicaMoveStatesToString) from the brokers' DescribeLogDirs.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Callable

from pylog.cli.admin_client import BROKER_RESOURCE, BrokerAdmin
from pylog.cli.common import CliError, OperationError
from pylog.cli.reassign_cluster import LOG_DIR_RATE
from pylog.cli.reassign_logic import TPR, replica_names
from pylog.protocol.errors import ErrorCode

RETRY_S = 0.1


def _plural(n: int) -> str:
    return "" if n == 1 else "s"


def set_log_dir_throttle(admin: BrokerAdmin, moves: Mapping[TPR, str], rate: int) -> None:
    """modifyLogDirThrottle: the rate on every broker a replica moves within."""
    for broker in sorted({b for _, _, b in moves}):
        admin.incremental_alter_configs(BROKER_RESOURCE, str(broker), {LOG_DIR_RATE: str(rate)}, ())


def execute_moves(admin: BrokerAdmin, moves: Mapping[TPR, str], timeout_ms: int,
                  clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep
                  ) -> list[str]:
    """Start every move; Kafka's "Successfully started log directory move(s)" lines, one per round."""
    deadline = clock() + timeout_ms / 1000
    pending = dict(moves)
    lines: list[str] = []
    while True:
        outcome = admin.alter_replica_log_dirs(pending)
        started = []
        for replica, err in outcome.items():
            if err is None:
                started.append(replica)
            elif err.code != ErrorCode.REPLICA_NOT_AVAILABLE:  # not on its new broker yet: try again
                raise OperationError(f"Failed to alter dir for {replica_names([replica])[0]}: {err.java_string()}")
        if started:
            lines.append(f"Successfully started log directory move{_plural(len(started))} for: "
                         f"{','.join(replica_names(started))}")
        for replica in started:
            pending.pop(replica, None)
        if not pending:
            return lines
        if clock() >= deadline:
            raise CliError("\n".join(lines + [f"Timed out before log directory move{_plural(len(pending))} could "
                                              f"be started for: {','.join(replica_names(pending))}"]))
        sleep(RETRY_S)


def move_states(admin: BrokerAdmin, moves: Mapping[TPR, str]) -> tuple[list[str], bool]:
    """replicaMoveStatesToString's lines, and whether a move is still going on."""
    found = admin.replica_log_dirs(moves)
    lines, ongoing = [], False
    for replica in sorted(moves, key=lambda r: (r[2], r[0], r[1])):
        t, p, b = replica
        target, text = moves[replica], replica_names([replica])[0]
        current, future = found.get(replica, (None, None))
        if replica not in found:
            ongoing = True
            lines.append(f"Partition {t}-{p} cannot be found in any live log directory on broker {b}.")
        elif current is None:
            ongoing = True
            lines.append(f"Partition {t}-{p} is not found in any live log dir on broker {b}. There is likely an "
                         f"offline log directory on the broker.")
        elif future is not None:
            ongoing = True
            lines.append(f"Reassignment of replica {text} is still in progress." if future == target else
                         f"Partition {t}-{p} on broker {b} is being moved to log dir {future} instead of {target}.")
        elif current == target:
            lines.append(f"Reassignment of replica {text} completed successfully.")
        else:
            lines.append(f"Partition {t}-{p} on broker {b} is not being moved from log dir {current} to {target}.")
    return lines, ongoing
