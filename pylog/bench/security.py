"""Security costs: produce and consume over SASL_SSL (SCRAM-SHA-512, TLS 1.3) against PLAINTEXT, and SCRAM handshakes.

One broker with both listeners; the same confluent-kafka client and the same records in the same run,
alternating the two listeners. Produce: 100-byte records to one partition, acks=1, ~1 MB batches.
Consume: the same log read from offset 0 on each listener (TLS cannot use sendfile: the broker reads
the segment and encrypts it). Prints records/s, MB/s, the SASL_SSL/PLAINTEXT ratio (goal >= 0.7) and
the broker's CPU seconds per GB of record values. Then SCRAM-SHA-512 authentications per second from
one client (pylog's blocking client, each a new connection with ApiVersions, SaslHandshake and two
SaslAuthenticate rounds; the client's PBKDF2 of 4096 iterations is most of it) and the broker CPU
milliseconds per authentication.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
import time
from typing import Iterator, Sequence

from pylog.bench import _harness as h
from pylog.client.aio import ConnectSecurity
from pylog.client.sync import KafkaClient
from pylog.security.certs import LocalCA
from pylog.security.sasl_client import client_mechanism

TOPIC = "bench-security"
USER, PASSWORD = "bench", "bench-secret"
SCRAM = "SCRAM-SHA-512"


def _broker_config(ca: LocalCA) -> dict[str, str]:
    ks = ca.issue("broker", "/CN=localhost")
    return {"ssl.keystore.type": "PEM", "ssl.keystore.location": str(ks.path), "sasl.enabled.mechanisms": SCRAM,
            "log.retention.check.interval.ms": "1000"}


@contextlib.contextmanager
def secure_cluster(zk_connect: str | None = None) -> Iterator[tuple[h.Target, h.Target, dict[str, dict], LocalCA]]:
    """A broker with PLAINTEXT and SASL_SSL listeners; the two targets and their client settings."""
    ca = LocalCA(tempfile.mkdtemp(prefix="pylog-bench-ca-"))
    with h.pylog_cluster(1, _broker_config(ca), zk_connect=zk_connect,
                         extra_listeners={"SASL_SSL": "SASL_SSL"}) as cluster:
        plain = h.pylog_target(cluster, "PLAINTEXT")
        secure = h.Target("SASL_SSL", cluster.bootstrap_on("SASL_SSL"), plain.pids)
        from confluent_kafka.admin import AdminClient, ScramCredentialInfo, ScramMechanism, UserScramCredentialUpsertion
        admin = AdminClient({"bootstrap.servers": plain.bootstrap})
        up = UserScramCredentialUpsertion(USER, ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096), PASSWORD.encode())
        admin.alter_user_scram_credentials([up])[USER].result(30)
        confs = {"PLAINTEXT": {}, "SASL_SSL": {"security.protocol": "SASL_SSL", "sasl.mechanisms": SCRAM,
                                               "sasl.username": USER, "sasl.password": PASSWORD,
                                               "ssl.ca.location": str(ca.cert)}}
        yield plain, secure, confs, ca


def _ratio(res: dict[str, list[h.RunResult]]) -> str:
    """The median of the per-rep SASL_SSL/PLAINTEXT ratios, and their range.

    Each rep runs the two listeners back to back, so a rep's ratio compares runs made under the same
    load; on a shared machine whose load swings 2-3x between reps, the ratio of the two medians mixes
    different loads and can land anywhere.
    """
    ratios = sorted(s.rate / p.rate for p, s in zip(res["PLAINTEXT"], res["SASL_SSL"]))
    return f"{h.median(ratios):.2f} ({ratios[0]:.2f}-{ratios[-1]:.2f})"


def throughput(records: int, reps: int, value_size: int, plain: h.Target, secure: h.Target,
               confs: dict[str, dict]) -> list[list]:
    """Produce then consume rows: PLAINTEXT, SASL_SSL and the ratio."""
    rows: list[list] = []
    h.create_topics(plain.bootstrap, [TOPIC], config={"segment.bytes": str(256 * 1024 * 1024)})
    batching = h.SCENARIOS["1m"]
    for t in (plain, secure):
        h.produce(t, TOPIC, max(records // 10, 10000), value_size, {**batching, **confs[t.name]})
    res = h.interleaved(reps, [plain, secure], lambda t: h.produce(t, TOPIC, records, value_size,
                                                                  {**batching, **confs[t.name]}))
    base, sec = h.summarize(res["PLAINTEXT"]), h.summarize(res["SASL_SSL"])
    rows.append(["produce", "PLAINTEXT", *h.summary_cells(base), "1.00"])
    rows.append(["produce", "SASL_SSL", *h.summary_cells(sec), _ratio(res)])
    lo, hi = h.end_offset(plain.bootstrap, TOPIC)
    start, end = max(lo, hi - records), hi
    consumers = {t.name: h.consumer(t, confs[t.name]) for t in (plain, secure)}
    try:
        for t in (plain, secure):
            h.consume(consumers[t.name], t, TOPIC, start, min(end, start + 100000), value_size=value_size)
        res = h.interleaved(reps, [plain, secure], lambda t: h.consume(consumers[t.name], t, TOPIC, start, end,
                                                                      value_size=value_size))
    finally:
        for c in consumers.values():
            c.close()
    base, sec = h.summarize(res["PLAINTEXT"]), h.summarize(res["SASL_SSL"])
    rows.append([f"consume ({end - start:,} records)", "PLAINTEXT", *h.summary_cells(base), "1.00"])
    rows.append([f"consume ({end - start:,} records)", "SASL_SSL", *h.summary_cells(sec), _ratio(res)])
    return rows


def handshakes(secure: h.Target, ca: LocalCA, seconds: float, protocol_tls: bool = True) -> list:
    """SCRAM-SHA-512 authentications per second from one client, and broker CPU ms per authentication."""
    import ssl
    tls = ssl.create_default_context(cafile=str(ca.cert)) if protocol_tls else None
    sec = ConnectSecurity(tls, lambda: client_mechanism(SCRAM, USER, PASSWORD))
    c0, n = secure.cpu(), 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        with KafkaClient(secure.bootstrap, client_id="bench-auth", timeout=10, security=sec) as k:
            k.version_for(3)  # connect, negotiate, authenticate
        n += 1
    elapsed = time.perf_counter() - t0
    c1 = secure.cpu()
    broker_ms = (c1[0] + c1[1] - c0[0] - c0[1]) * 1000 / n
    return [f"SCRAM-SHA-512 over {'SASL_SSL' if protocol_tls else 'SASL_PLAINTEXT'}", n, f"{n / elapsed:.0f}",
            f"{broker_ms:.2f}"]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: prints Markdown tables on stdout (progress on stderr)."""
    ap = argparse.ArgumentParser(prog="scripts/bench security", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, default=1_000_000, help="records per timed run")
    ap.add_argument("--reps", type=int, default=3, help="timed runs per listener (the median is reported)")
    ap.add_argument("--value-size", type=int, default=100)
    ap.add_argument("--auth-seconds", type=float, default=10.0, help="how long to measure authentications")
    args = ap.parse_args(argv)
    print(f"<!-- {h.machine_notes()} -->")
    with secure_cluster() as (plain, secure, confs, ca):
        rows = throughput(args.records, args.reps, args.value_size, plain, secure, confs)
        auth = [handshakes(secure, ca, args.auth_seconds)]
    h.print_report(f"security: {args.records:,} x {args.value_size} B records per run, 1 partition, RF 1, acks=1, "
                   f"~1 MB batches, median of {args.reps}",
                   ["run", "listener", "records/s", "MB/s", "broker CPU-s/GB (sys)", "broker busy (of 1 core)",
                    "ratio vs PLAINTEXT (median of reps, range)"], rows)
    h.print_report("SCRAM-SHA-512 authentications, one client, new connection each",
                   ["mechanism", "authentications", "per second", "broker CPU ms each"], auth)
    return 0


if __name__ == "__main__":
    sys.exit(main())
