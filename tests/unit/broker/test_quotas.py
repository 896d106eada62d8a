"""Client quota resolution and rates as Kafka's DefaultQuotaCallback, Rate and TokenBucket compute them."""

from pylog.broker.quotas import ClientQuotas, Rate, TokenBucket


def quotas(**entities):
    q = ClientQuotas()
    q.entities = {path.replace("__", "/").replace("DEF", "<default>"): {"producer_byte_rate": v}
                  for path, v in entities.items()}
    return q


def test_the_most_specific_entity_wins_in_kafkas_order():
    order = [("users__alice__clients__app", 1), ("users__alice__clients__DEF", 2), ("users__alice", 3),
             ("users__DEF__clients__app", 4), ("users__DEF__clients__DEF", 5), ("users__DEF", 6),
             ("clients__app", 7), ("clients__DEF", 8)]
    for i, (_, bound) in enumerate(order):
        q = quotas(**dict(order[i:]))
        assert q.quota("producer_byte_rate", "alice", "app")[0] == bound
    # a user-level quota is shared by the user's clients; a default one is per user
    assert quotas(users__alice=3).quota("producer_byte_rate", "alice", "x")[1:] == ("alice", "")
    assert quotas(users__DEF=6).quota("producer_byte_rate", "bob", "x")[1:] == ("bob", "")
    assert quotas(users__alice=3).quota("producer_byte_rate", "bob", "x") is None


def test_names_are_sanitized_as_kafka_stores_them():
    q = ClientQuotas()
    q.entities = {"users/User%3Aa%20b": {"consumer_byte_rate": 5.0}}
    assert q.quota("consumer_byte_rate", "User:a b", "c")[0] == 5.0


def test_rate_window_is_at_least_all_but_one_sample_and_throttle_brings_it_to_the_bound():
    r = Rate()
    r.record(2000, 0)
    assert r.window_ms(0) == 10_000 and r.rate(0) == 200.0
    q = quotas(clients__app=100)
    assert q.record("producer_byte_rate", "u", "app", 1000, 0) == 0  # 100/s over the 10 s window: at the bound
    # 1500 bytes in 10 s is 150/s: the client waits until the window makes it 100/s, (150-100)/100 * 10 s
    assert q.record("producer_byte_rate", "u", "app", 500, 0) == 5000


def test_token_bucket_refills_at_its_rate_up_to_its_burst():
    b = TokenBucket(2.0, 6.0, 0)
    b.tokens -= 12
    assert b.value(0) == -6 and b.throttle_ms(0) == 3000
    assert b.value(1000) == -4
    assert b.value(60_000) == 6.0
