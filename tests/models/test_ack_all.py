"""The model worker acknowledges a batch's messages in one Redis round trip
(agents/serving/worker.py ``ack_all``), through kombu's own Redis QoS, on a real Redis: the
messages leave kombu's unacked index, and none is delivered again."""
from __future__ import annotations

import pytest
from django.conf import settings

from agents.serving.worker import ack_all

pytestmark = pytest.mark.skipif(not str(settings.CELERY_BROKER_URL).startswith("redis"), reason="needs Redis")
NAME = "test.ack_all"


def test_a_batch_is_acknowledged_in_one_round_trip(monkeypatch):
    from kombu import Connection, Exchange, Queue
    from redis.client import Pipeline

    queue = Queue(NAME, Exchange(NAME, type="direct"), routing_key=NAME)
    with Connection(settings.CELERY_BROKER_URL) as conn:
        bound = queue(conn.default_channel)
        bound.declare()
        bound.purge()
        with conn.Producer() as producer:
            for i in range(5):
                producer.publish({"i": i}, exchange=queue.exchange, routing_key=NAME, declare=[queue])
        got = []
        with conn.Consumer(queue, callbacks=[lambda body, message: got.append(message)], accept=["json"],
                           prefetch_count=10):
            while len(got) < 5:
                conn.drain_events(timeout=5)
            channel = got[0].channel
            client, qos = channel.client, channel.qos
            tags = [m.delivery_tag for m in got]
            assert all(client.hexists(qos.unacked_key, tag) for tag in tags)   # delivered, not acknowledged

            executed = []
            real = Pipeline.execute
            monkeypatch.setattr(Pipeline, "execute", lambda self, *a, **k: executed.append(1) or real(self, *a, **k))
            ack_all(got)
            monkeypatch.undo()
            assert executed == [1]                                              # one round trip for five
            assert not any(client.hexists(qos.unacked_key, tag) for tag in tags)
            assert all(client.zscore(qos.unacked_index_key, tag) is None for tag in tags)
            assert all(m.acknowledged for m in got)
        assert bound.get(no_ack=True) is None


def test_messages_without_a_redis_qos_are_acknowledged_one_by_one():
    class Plain:
        acks = 0

        def ack(self):
            self.acks += 1

    messages = [Plain(), Plain()]
    ack_all(messages)
    assert [m.acks for m in messages] == [1, 1]
