"""What pylog-top.sh shows, gathered from the Kafka APIs and the brokers' /metrics endpoints (read only).

Brokers, controller, partitions and reassignments come from Metadata and ListPartitionReassignments;
each broker's endpoint is its `prometheus.listener` (DescribeConfigs), unless given with --metrics.
Rates (bytes in/out, records per partition) are the difference of two scrapes over their interval.
"""

from __future__ import annotations

import time
import urllib.request
from dataclasses import dataclass, field
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from pylog.cli.admin_client import BROKER_RESOURCE, BrokerAdmin
from pylog.common.listeners import parse_http_listener

Series = dict[tuple[str, tuple[tuple[str, str], ...]], float]  # (name, sorted labels) -> value


@dataclass
class Scrape:
    """One broker's /metrics at one moment (None series when the endpoint did not answer)."""

    at: float
    series: Series | None
    error: str | None = None

    def get(self, name: str, **labels: str) -> float | None:
        """One series' value, or None."""
        if self.series is None:
            return None
        return self.series.get((name, tuple(sorted(labels.items()))))

    def each(self, name: str) -> list[tuple[dict[str, str], float]]:
        """Every series of a name with its labels."""
        return [(dict(lbl), v) for (n, lbl), v in (self.series or {}).items() if n == name]


def scrape(url: str, timeout: float = 5.0) -> Scrape:
    """GET and parse one endpoint; a failure is kept as the scrape's error."""
    at = time.monotonic()
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            text = resp.read().decode()
    except OSError as exc:
        return Scrape(at, None, str(getattr(exc, "reason", exc)))
    series: Series = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            series[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return Scrape(at, series)


def metrics_urls(admin: BrokerAdmin, overrides: dict[int, str]) -> dict[int, str | None]:
    """Each live broker's /metrics URL: --metrics, else its prometheus.listener (host 0.0.0.0: the broker's)."""
    admin.client.refresh_metadata(topics=[])
    out: dict[int, str | None] = {}
    for bid, (host, _port, _rack) in sorted(admin.client.brokers.items()):
        if bid in overrides:
            out[bid] = overrides[bid]
            continue
        try:
            configs = admin.describe_configs([(BROKER_RESOURCE, str(bid))])[(BROKER_RESOURCE, str(bid))]
            value = next((c.value for c in configs if c.name == "prometheus.listener"), None)
            address = parse_http_listener(value)
        except Exception:  # a broker without the key (not pylog, or older): Kafka APIs only
            address = None
        if address is None:
            out[bid] = None
        else:
            mhost = host if address[0] in ("0.0.0.0", "::", "") else address[0]
            out[bid] = f"http://{mhost}:{address[1]}/metrics"
    return out


@dataclass
class TopView:
    """Everything one refresh shows; `to_json()` is the --output json document."""

    controller: int | None
    brokers: list[dict[str, Any]] = field(default_factory=list)
    cluster: dict[str, Any] = field(default_factory=dict)
    partitions: list[dict[str, Any]] = field(default_factory=list)
    groups: list[dict[str, Any]] = field(default_factory=list)
    reassignments: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """A plain dict for json.dumps."""
        return {"controller": self.controller, "cluster": self.cluster, "brokers": self.brokers,
                "partitions": self.partitions, "groups": self.groups, "reassignments": self.reassignments}


def _rate(now: Scrape, before: Scrape | None, name: str, **labels: str) -> float | None:
    cur = now.get(name, **labels)
    prev = before.get(name, **labels) if before is not None else None
    if cur is None or prev is None or now.at <= before.at:  # type: ignore[union-attr]
        return None
    return max(cur - prev, 0.0) / (now.at - before.at)  # type: ignore[union-attr]


def _p99(s: Scrape, request: str) -> float | None:
    return s.get("kafka_network_requestmetrics_totaltimems", request=request, quantile="0.99")


def build_view(admin: BrokerAdmin, urls: dict[int, str | None], now: dict[int, Scrape],
               before: dict[int, Scrape], top: int = 10) -> TopView:
    """Combine Metadata, reassignments and two rounds of scrapes into what is shown."""
    meta = admin.metadata()
    view = TopView(meta.controller_id)
    led: dict[int, int] = {}
    urp = offline = 0
    for t in meta.topics.values():
        for p in t.partitions.values():
            if p.leader is None:
                offline += 1
            else:
                led[p.leader] = led.get(p.leader, 0) + 1
                urp += len(p.isr) < len(p.replicas)
    for bid in sorted(urls):
        s, prev = now.get(bid), before.get(bid)
        row: dict[str, Any] = {"id": bid, "host": "%s:%d" % admin.client.brokers[bid][:2],
                               "controller": bid == meta.controller_id, "metrics": urls[bid], "leaders": led.get(bid, 0)}
        if s is not None and s.series is not None:
            state = next((lbl["state"] for lbl, v in s.each("pylog_broker_state") if v == 1), None)
            busy = _rate(s, prev, "pylog_eventloop_busy_seconds_total")
            row.update(state=state, partitions=s.get("kafka_server_replicamanager_partitioncount"),
                       under_replicated=s.get("kafka_server_replicamanager_underreplicatedpartitions"),
                       bytes_in_per_sec=_rate(s, prev, "kafka_server_brokertopicmetrics_bytesin_total"),
                       bytes_out_per_sec=_rate(s, prev, "kafka_server_brokertopicmetrics_bytesout_total"),
                       produce_p99_ms=_p99(s, "Produce"), fetch_p99_ms=_p99(s, "FetchConsumer"),
                       event_loop_busy=busy, reassignment_bytes_remaining=s.get("pylog_reassignment_bytes_remaining"))
        elif s is not None:
            row["error"] = s.error
        view.brokers.append(row)
    view.cluster = {"brokers": len(urls), "controller": meta.controller_id, "under_replicated_partitions": urp,
                    "offline_partitions": offline, "topics": len(meta.topics),
                    "partitions": sum(len(t.partitions) for t in meta.topics.values())}
    view.partitions = _busiest(now, before, top)
    view.groups = _groups(now)
    view.reassignments = [{"topic": t, "partition": p, "replicas": list(r.replicas), "adding": list(r.adding),
                           "removing": list(r.removing)}
                          for (t, p), r in sorted(admin.list_partition_reassignments().items())]
    return view


def _busiest(now: dict[int, Scrape], before: dict[int, Scrape], top: int) -> list[dict[str, Any]]:
    """Partitions by records appended per second (their leader's log end offset over the interval)."""
    rows = []
    for bid, s in now.items():
        led = {(lbl["topic"], lbl["partition"]) for lbl, _v in s.each("kafka_topic_partition_current_offset")}
        for lbl, leo in s.each("kafka_log_log_logendoffset"):
            key = (lbl["topic"], lbl["partition"])
            if key not in led:
                continue
            rate = _rate(s, before.get(bid), "kafka_log_log_logendoffset", partition=key[1], topic=key[0])
            rows.append({"topic": key[0], "partition": int(key[1]), "leader": bid, "records_per_sec": rate,
                         "log_end_offset": leo, "size_bytes": s.get("kafka_log_log_size", partition=key[1], topic=key[0])})
    rows.sort(key=lambda r: (-(r["records_per_sec"] or 0), -(r["size_bytes"] or 0), r["topic"], r["partition"]))
    return rows[:top]


def _groups(now: dict[int, Scrape]) -> list[dict[str, Any]]:
    """Groups by total lag, as their coordinators report it."""
    out: dict[str, dict[str, Any]] = {}
    for bid, s in now.items():
        for lbl, members in s.each("kafka_consumergroup_members"):
            out[lbl["consumergroup"]] = {"group": lbl["consumergroup"], "coordinator": bid, "members": int(members),
                                         "lag": 0, "partitions": 0}
        for lbl, lag in s.each("kafka_consumergroup_lag"):
            g = out.setdefault(lbl["consumergroup"], {"group": lbl["consumergroup"], "coordinator": bid, "members": 0,
                                                      "lag": 0, "partitions": 0})
            g["lag"] += int(lag)
            g["partitions"] += 1
    return sorted(out.values(), key=lambda g: (-g["lag"], g["group"]))
