"""What the /metrics endpoint costs produce throughput: two single-broker clusters in the same run, one with
`prometheus.listener` on (and scraped every --scrape-interval seconds by a separate process, as Prometheus
would) and one with it off, measured interleaved with the same confluent-kafka producer (`scripts/bench produce
--metrics-overhead`). The counters on the request path are always there (they cost the same in both); the
difference measured is the endpoint, its scrapes and their snapshots on the event loop. Goal: under 2 %.
"""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request

from pylog.bench import _harness as h
from pylog.bench.produce import BROKER_CONFIG, TOPIC, topic_config
from pylog.zk.testing import free_port

_SCRAPER = """
import sys, time, urllib.request
url, every = sys.argv[1], float(sys.argv[2])
while True:
    t = time.monotonic()
    try:
        urllib.request.urlopen(url, timeout=10).read()
    except OSError:
        pass
    time.sleep(max(every - (time.monotonic() - t), 0.01))
"""


def run(records: int, reps: int, scenarios: list[str], value_size: int, scrape_interval: float = 1.0,
        prime_mb: int = 0, zk_connect: str | None = None, partitions: int = 1) -> list[list]:
    """Rows: per scenario, the endpoint off, on (scraped), and on/off."""
    rows: list[list] = []
    port = free_port()
    topic = TOPIC if partitions == 1 else f"{TOPIC}-p{partitions}"
    on_config = {**BROKER_CONFIG, "prometheus.listener": f"http://127.0.0.1:{port}"}
    with h.pylog_cluster(1, BROKER_CONFIG, prime_mb=prime_mb, zk_connect=zk_connect) as off_cluster, \
            h.pylog_cluster(1, on_config, zk_connect=zk_connect) as on_cluster:
        off = h.pylog_target(off_cluster, "metrics off")
        on = h.pylog_target(on_cluster, "metrics on")
        for t in (off, on):
            h.create_topics(t.bootstrap, [topic], partitions=partitions, config=topic_config(partitions))
        scraper = subprocess.Popen([sys.executable, "-c", _SCRAPER, f"http://127.0.0.1:{port}/metrics",
                                    str(scrape_interval)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for name in scenarios:
                conf = h.SCENARIOS[name]
                h.log(f"scenario {name} {conf}: warm-up")
                for t in (off, on):
                    h.produce(t, topic, max(records // 10, min(records, 10000)), value_size, conf, partitions=partitions)
                res = h.interleaved(reps, [off, on], lambda t: h.produce(t, topic, records, value_size, conf,
                                                                       partitions=partitions))
                a, b = h.summarize(res[off.name]), h.summarize(res[on.name])
                rows.append([name, f"{a.rate:,.0f}", f"{b.rate:,.0f}", f"{(b.rate / a.rate - 1) * 100:+.1f} %",
                             f"{a.cpu_per_gb:.2f}", f"{b.cpu_per_gb:.2f}",
                             " ".join(f"{r.rate / 1000:.0f}k" for r in res[off.name]),
                             " ".join(f"{r.rate / 1000:.0f}k" for r in res[on.name])])
        finally:
            scraper.kill()
            scraper.wait(10)
        rows.append(scrape_cost(on, off, f"http://127.0.0.1:{port}/metrics", 200 if partitions < 100 else 50))
    return rows


def scrape_cost(on: h.Target, off: h.Target, url: str, scrapes: int = 200) -> list:
    """A row with the broker CPU one scrape costs (back-to-back scrapes of the idle `on` broker, less what the
    idle `off` broker used meanwhile) and what that is of one core at 1 s and 15 s scrape intervals."""
    c_on, c_off, t0 = sum(on.cpu()), sum(off.cpu()), time.perf_counter()
    size = 0
    for _ in range(scrapes):
        with urllib.request.urlopen(url, timeout=10) as resp:
            size = len(resp.read())
    wall = time.perf_counter() - t0
    per_scrape = max((sum(on.cpu()) - c_on) - (sum(off.cpu()) - c_off), 0.0) / scrapes
    h.log(f"{scrapes} scrapes of {size:,} B in {wall:.1f}s: {per_scrape * 1000:.2f} ms broker CPU each")
    return [f"one scrape ({size // 1024} KiB)", f"{per_scrape * 1000:.2f} ms CPU", "", "",
            f"{per_scrape * 100:.2f} % of a core at 1 s", f"{per_scrape * 100 / 15:.3f} % at 15 s", "", ""]


HEADER = ["batching", "off records/s", "on records/s", "on vs off", "off CPU-s/GB", "on CPU-s/GB",
          "off reps", "on reps"]
