"""One consumer-group member of `scripts/chaos --groups`, run as its own process so the run can kill -9 it.

    python -m pylog.chaos.group_member BOOTSTRAP GROUP TOPIC OUTFILE CLIENT_ID SESSION_TIMEOUT_MS

A confluent-kafka consumer at its defaults except for what an at-least-once application sets: it
commits itself, synchronously, after processing each polled batch, and a session timeout short
enough that a killed member's partitions come back within a chaos run. Processing a record is
writing `P partition offset seq` to OUTFILE (line-buffered, so a kill -9 loses at most the line
being written); a commit is `C partition next-offset` once acknowledged, `F partition next-offset
error` when refused; `A p,p,..` and `R p,p,..` record assignments and revocations.
"""

from __future__ import annotations

import sys

import confluent_kafka as ck


def member_config(bootstrap: str, group: str, client_id: str, session_timeout_ms: int) -> dict:
    """The consumer's settings (everything else is confluent-kafka's default)."""
    return {"bootstrap.servers": bootstrap, "group.id": group, "client.id": client_id,
            "auto.offset.reset": "earliest", "enable.auto.commit": False,
            "session.timeout.ms": session_timeout_ms, "log_level": 3}


def main(argv: list[str]) -> None:
    """Consume, process, commit, forever (the run kills or terminates the process)."""
    bootstrap, group, topic, path, client_id, session_ms = argv[:6]
    c = ck.Consumer(member_config(bootstrap, group, client_id, int(session_ms)))
    with open(path, "a", buffering=1) as out:
        def assigned(_, parts):
            out.write(f"A {','.join(str(tp.partition) for tp in parts)}\n")

        nxt: dict[int, int] = {}  # partition -> offset to commit; kept until a commit succeeds

        def revoked(_, parts):
            out.write(f"R {','.join(str(tp.partition) for tp in parts)}\n")
            for tp in parts:
                nxt.pop(tp.partition, None)  # the next owner starts from what was committed

        c.subscribe([topic], on_assign=assigned, on_revoke=revoked)
        while True:
            for m in c.consume(500, 0.5):
                if m.error() is None:
                    out.write(f"P {m.partition()} {m.offset()} {int(m.value())}\n")
                    nxt[m.partition()] = m.offset() + 1
            if not nxt:
                continue
            try:
                c.commit(offsets=[ck.TopicPartition(topic, p, o) for p, o in nxt.items()], asynchronous=False)
                out.write("".join(f"C {p} {o}\n" for p, o in nxt.items()))
                nxt.clear()
            except ck.KafkaException as exc:
                out.write("".join(f"F {p} {o} {exc.args[0].name()}\n" for p, o in nxt.items()))


if __name__ == "__main__":
    main(sys.argv[1:])
