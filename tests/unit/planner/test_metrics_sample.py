"""The `__pylog_metrics` sample format the broker publishes and the Spark planner reads (pylog.common)."""
import json

import pytest

from pylog.common.metrics_format import METRICS_TOPIC, MetricSample, decode_sample, encode_sample


def test_sample_round_trips_with_a_partition_key():
    sample = MetricSample(3, "orders", 7, 1_700_000_000_000, 4096, 10.5, 20.0, 3.0, False)
    key, value = encode_sample(sample)
    assert METRICS_TOPIC == "__pylog_metrics"
    assert key == b"orders-7"
    assert json.loads(value)["version"] == 1 and b" " not in value
    assert decode_sample(value) == sample


def test_decoder_ignores_unknown_keys_and_rejects_missing_ones():
    _, value = encode_sample(MetricSample(1, "t", 0, 5, 1, 0.0, 0.0, 0.0))
    data = json.loads(value)
    data["future_field"] = 1
    assert decode_sample(json.dumps(data).encode()).topic == "t"
    del data["size_bytes"]
    with pytest.raises(ValueError, match="malformed metric sample"):
        decode_sample(json.dumps(data).encode())
