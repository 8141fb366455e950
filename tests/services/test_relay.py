"""The outbox relay against the real PostgreSQL and broker: in order per coupon, at least once,
one relay at a time."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest

from coupon_core.adapters.kafka.event_publisher import EventPublisher
from coupon_core.adapters.postgres.admin_catalog import SqlAdminCatalog
from coupon_core.adapters.postgres.ledger import SqlLedger
from coupon_core.adapters.postgres.outbox_relay import SqlOutbox
from coupon_core.domain.operations import NewCoupon
from coupon_core.domain.outbox_relay import CouponEvent, relay
from coupon_core.domain.records import IssueRecord
from coupon_core.settings import KafkaSettings
from functions.relay import app as relay_app
from functions.relay import dependencies
from local.testkit.kafka_topics import create_topic, kafka_settings, read_all
from local.testkit.lambda_events import InProcessContext
from tests.database_support import empty_tables


@pytest.fixture
def events_topic(kafka_bootstrap_servers: str) -> KafkaSettings:
    topic = create_topic(kafka_bootstrap_servers, partitions=3, name=f"coupon.events.test-{uuid.uuid4().hex[:10]}")
    return kafka_settings(kafka_bootstrap_servers, topic)


@pytest.fixture
def outbox(migrated_engine) -> SqlOutbox:
    empty_tables(migrated_engine)
    return SqlOutbox(migrated_engine)


def issue(engine, users: Sequence[int]) -> int:
    """A coupon with ``users`` issued through the worker's ledger (one outbox event each)."""
    now = datetime.now(UTC)
    coupon = SqlAdminCatalog(engine).create(
        NewCoupon("relay test", 10, now - timedelta(hours=1), now + timedelta(hours=1)),
        before_commit=lambda coupon: None,  # no intake asks the registry here
    )
    messages = [IssueRecord(coupon.coupon_id, user, uuid.uuid4(), int(time.time() * 1000)) for user in users]
    SqlLedger(engine).record_group(coupon.coupon_id, messages)
    return coupon.coupon_id


def published(settings: KafkaSettings) -> list[dict]:
    return [json.loads(record.value) for record in read_all(",".join(settings.bootstrap_servers), settings.topic)]


def test_events_are_published_in_order_per_coupon_with_their_envelope_and_marked(migrated_engine, outbox, events_topic):
    first, second = issue(migrated_engine, [1, 2, 3]), issue(migrated_engine, [7, 8])
    publisher = EventPublisher(events_topic, timeout_ms=10_000)

    report = relay(outbox, publisher.publish, batch=2, max_batches=10)
    again = relay(outbox, publisher.publish, batch=2, max_batches=10)

    assert (report.published, report.skipped, again.published, again.lag_seconds) == (5, False, 0, 0)
    events = published(events_topic)
    assert [(e["couponId"], e["payload"]["userId"]) for e in events if e["couponId"] == first] == [
        (first, 1), (first, 2), (first, 3)
    ]  # fmt: skip
    assert [e["payload"]["userId"] for e in events if e["couponId"] == second] == [7, 8]
    assert {e["version"] for e in events} == {1}
    assert {e["type"] for e in events} == {"COUPON_ISSUED"}
    assert len({e["id"] for e in events}) == 5
    assert all(datetime.fromisoformat(e["occurredAt"]).tzinfo for e in events)


def test_a_failed_publish_marks_nothing_and_the_next_run_sends_the_batch_again(migrated_engine, outbox, events_topic):
    issue(migrated_engine, [1, 2, 3])
    publisher = EventPublisher(events_topic, timeout_ms=10_000)

    def publish_then_fail(events: Sequence[CouponEvent]) -> None:
        publisher.publish(events)  # Kafka has them...
        raise RuntimeError("the relay crashed before it could mark them")

    with pytest.raises(RuntimeError, match="crashed"):
        relay(outbox, publish_then_fail, batch=10, max_batches=1)
    assert outbox.lag_seconds() > 0
    assert relay(outbox, publisher.publish, batch=10, max_batches=1).published == 3
    ids = [e["id"] for e in published(events_topic)]
    assert len(ids) == 6
    assert len(set(ids)) == 3  # at least once: the repeats carry the same event ids


def test_one_relay_at_a_time(migrated_engine, outbox, events_topic):
    issue(migrated_engine, [1, 2, 3, 4])
    publisher = EventPublisher(events_topic, timeout_ms=10_000)
    inside, release = threading.Event(), threading.Event()

    def slow_publish(events: Sequence[CouponEvent]) -> None:
        inside.set()
        release.wait(10)
        publisher.publish(events)

    first = []
    runner = threading.Thread(target=lambda: first.append(relay(outbox, slow_publish, batch=10, max_batches=1)))
    runner.start()
    assert inside.wait(10)
    second = relay(SqlOutbox(migrated_engine), publisher.publish, batch=10, max_batches=1)
    release.set()
    runner.join(10)

    assert (second.skipped, second.published) == (True, 0)
    assert first[0].published == 4
    assert len(published(events_topic)) == 4


def test_the_handler_relays_on_demand_and_refuses_other_events(
    monkeypatch, migrated_engine, outbox, events_topic, redis_url, database_url
):
    for name, value in {
        "REDIS_URL": redis_url,
        "DATABASE_URL": database_url,
        "KAFKA_BOOTSTRAP_SERVERS": ",".join(events_topic.bootstrap_servers),
        "KAFKA_TOPIC": events_topic.topic,
    }.items():
        monkeypatch.setenv(name, value)
    dependencies.wiring.cache_clear()
    issue(migrated_engine, [5])
    with pytest.raises(relay_app.InvalidRelayEventError, match="expected a scheduled EventBridge event or"):
        relay_app.handler({"couponId": 1}, InProcessContext())
    assert outbox.lag_seconds() > 0
    report = relay_app.handler({}, InProcessContext())
    dependencies.wiring.cache_clear()
    assert (report["published"], report["skipped"], report["lag_seconds"]) == (1, False, 0)
