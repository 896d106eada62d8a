"""A KIP-848 consumer-group member (confluent-kafka, `group.protocol=consumer`, defaults otherwise) run as its own
process so a test can kill -9 it.

usage: consumer_worker.py BOOTSTRAP GROUP TOPIC OUTFILE CLIENT_ID [GROUP_INSTANCE_ID]

It appends `A p,p,...` to OUTFILE whenever its assignment changed, `P partition offset` for each record it processes, then commits that record
synchronously and appends `C partition offset` (`F ...` when the commit failed); on SIGTERM it closes
(leaving the group, or for a static member leaving for now) and exits.
"""

import signal
import sys

import confluent_kafka as ck


def main() -> None:
    bootstrap, group, topic, path, client_id = sys.argv[1:6]
    conf = {"bootstrap.servers": bootstrap, "group.id": group, "client.id": client_id, "group.protocol": "consumer",
            "auto.offset.reset": "earliest", "enable.auto.commit": False}
    if len(sys.argv) > 6:
        conf["group.instance.id"] = sys.argv[6]
    c = ck.Consumer(conf)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    c.subscribe([topic])
    with open(path, "a", buffering=1) as out:
        out.write("S\n")
        owned = None
        while not stop:
            m = c.poll(0.2)
            now = sorted(tp.partition for tp in c.assignment())
            if now != owned:
                owned = now
                out.write("A " + ",".join(map(str, now)) + "\n")
            if m is None or m.error() is not None:
                continue
            out.write(f"P {m.partition()} {m.offset()}\n")
            try:
                c.commit(message=m, asynchronous=False)
                out.write(f"C {m.partition()} {m.offset()}\n")
            except ck.KafkaException:
                out.write(f"F {m.partition()} {m.offset()}\n")
        c.close()
        out.write("E\n")


if __name__ == "__main__":
    main()
