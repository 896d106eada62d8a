"""A consumer-group member for tests, run as its own process so a test can kill -9 it.

usage: group_worker.py BOOTSTRAP GROUP TOPIC OUTFILE CLIENT_ID

It processes each record by appending `P partition offset` to OUTFILE, then commits that record's
offset synchronously and appends `C partition offset` (or `F ...` when the commit failed): commit
after processing, so a record may be processed twice only if its commit never happened.
"""

import sys
import time

import confluent_kafka as ck


def main() -> None:
    bootstrap, group, topic, path, client_id = sys.argv[1:6]
    c = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": group, "client.id": client_id,
                     "auto.offset.reset": "earliest", "enable.auto.commit": False,
                     # How long a killed member holds its partitions; users tune it the same way.
                     "session.timeout.ms": 6000})
    c.subscribe([topic])
    with open(path, "a", buffering=1) as out:
        out.write("S\n")
        while True:
            m = c.poll(0.2)
            if m is None or m.error() is not None:
                continue
            out.write(f"P {m.partition()} {m.offset()}\n")
            time.sleep(0.005)
            try:
                c.commit(message=m, asynchronous=False)
                out.write(f"C {m.partition()} {m.offset()}\n")
            except ck.KafkaException:
                out.write(f"F {m.partition()} {m.offset()}\n")


if __name__ == "__main__":
    main()
