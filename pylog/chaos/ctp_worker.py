"""One consume-transform-produce worker of `scripts/chaos --ctp`, its own process so the run can kill -9 it.

    python -m pylog.chaos.ctp_worker BOOTSTRAP GROUP TOPIC OUTFILE CLIENT_ID SESSION_TIMEOUT_MS OUTPUT_TOPIC

The exactly-once application of KIP-447: a group member (confluent-kafka at its defaults, so
read_committed, and the member settings of group_member.py) and a transactional producer. Each
polled batch becomes one transaction: every record written transformed to the output topic (same
partition, value `in_partition:in_offset:seq:txn`) and the batch's offsets sent with
send_offsets_to_transaction, then committed. Crash-only: on any error it aborts when it can and exits
(code 3), and the run starts it again, so the next incarnation resumes from the committed offsets.
OUTFILE gets `C txn` once a commit returned and `A txn` once an abort returned (`E txn error` first); `O txn`
once its offsets were sent and `R txn error` for each retried commit, so a stalled worker shows where it waits.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Callable

import confluent_kafka as ck

from pylog.chaos.group_member import member_config


def transactional_id(client_id: str) -> str:
    """One transactional.id per worker name: a restarted worker fences its killed predecessor."""
    return f"pylog-chaos-ctp-{client_id}"


def transform(m: ck.Message, txn: str) -> bytes:
    """The output record of input record `m`, naming where it came from and which transaction wrote it."""
    return f"{m.partition()}:{m.offset()}:{int(m.value())}:{txn}".encode()


def _one(p: ck.Producer, c: ck.Consumer, msgs: list, out_topic: str, txn: str, note: Callable[[str], None]) -> None:
    p.begin_transaction()
    nxt: dict[tuple[str, int], int] = {}
    for m in msgs:
        p.produce(out_topic, transform(m, txn), partition=m.partition())
        nxt[(m.topic(), m.partition())] = m.offset() + 1
    p.send_offsets_to_transaction([ck.TopicPartition(t, q, o) for (t, q), o in nxt.items()],
                                  c.consumer_group_metadata(), 60)
    note(f"O {txn}")  # offsets sent: a worker that stalls after this line is inside commit_transaction
    for attempt in range(10):
        try:
            p.commit_transaction(60)
            return
        except ck.KafkaException as e:
            if attempt == 9 or not e.args[0].retriable() or e.args[0].txn_requires_abort():
                raise
            note(f"R {txn} {e.args[0].name()}")


def _exit(c: ck.Consumer, code: int) -> None:
    """Leave the group if the coordinator answers soon (the next incarnation joins faster), then exit."""
    t = threading.Thread(target=c.close, daemon=True)
    t.start()
    t.join(10)
    os._exit(code)


def main(argv: list[str]) -> None:
    """Consume, transform, produce and commit in transactions until killed or an error ends the process."""
    bootstrap, group, topic, path, client_id, session_ms, out_topic = argv[:7]
    # PYLOG_CHAOS_CLIENT_DEBUG (e.g. "cgrp,eos,protocol") turns on librdkafka's debug contexts in both clients,
    # to its stderr file: how a stalled run's workers were diagnosed.
    debug = {"debug": os.environ["PYLOG_CHAOS_CLIENT_DEBUG"], "log_level": 7} \
        if os.environ.get("PYLOG_CHAOS_CLIENT_DEBUG") else {}
    c = ck.Consumer({**member_config(bootstrap, group, client_id, int(session_ms)), **debug})
    p = ck.Producer({"bootstrap.servers": bootstrap, "transactional.id": transactional_id(client_id),
                     "log_level": 3, **debug})
    p.init_transactions(120)
    tag, n = f"{client_id}.{os.getpid()}", 0
    with open(path, "a", buffering=1) as log:
        c.subscribe([topic])
        while True:
            msgs = [m for m in c.consume(500, 0.5) if m.error() is None]
            if not msgs:
                continue
            n += 1
            txn = f"{tag}.{n}"
            try:
                _one(p, c, msgs, out_topic, txn, lambda line: log.write(line + "\n"))
                log.write(f"C {txn}\n")
            except ck.KafkaException as e:
                err = e.args[0]
                log.write(f"E {txn} {err.name()}\n")
                if err.txn_requires_abort():
                    try:
                        p.abort_transaction(60)
                        log.write(f"A {txn}\n")
                    except ck.KafkaException as e2:
                        log.write(f"E {txn} {e2.args[0].name()}\n")
                _exit(c, 3)


if __name__ == "__main__":
    main(sys.argv[1:])
