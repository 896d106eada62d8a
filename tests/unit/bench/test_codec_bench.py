"""The codec benchmark covers Produce and Fetch through both codecs (run with tiny timing rounds)."""

from pylog.bench import codec


def test_codec_bench_rows():
    rows = codec.run(rounds=1, target_s=0.001)
    ops = {r[0] for r in rows}
    assert {"Produce v10 request decode, schema codec", "Produce v10 request decode, pylog fast path",
            "Produce v10 response build + encode, pylog fast path", "Fetch v11 request decode"} <= ops
    assert all(isinstance(r[2], float) and r[2] > 0 for r in rows)
    fast = [r for r in rows if r[0].endswith("pylog fast path") and "decode" in r[0]]
    assert all("records as memoryview" in r[3] for r in fast)  # no copy of the record sets
