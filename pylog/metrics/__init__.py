"""Prometheus metrics with Kafka's names (Strimzi's JMX-exporter rules, kafka_exporter's lag series).

`recorders` holds the few counters the hot paths bump (stdlib only, so every package may import
it); `snapshot` is the plain-data picture of a broker that the broker fills at scrape time;
`collector` turns both into Prometheus families and `exporter` serves them over HTTP.
"""
