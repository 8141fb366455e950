"""The worker and the DLQ handler against real PostgreSQL, Valkey and Tansu (SQS from moto)."""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import boto3
import pytest
from kafka import KafkaProducer
from moto import mock_aws
from sqlalchemy import make_url, text

from coupon_core.adapters.postgres.engine import engine_for_url
from coupon_core.adapters.postgres.ledger import SqlLedger
from coupon_core.adapters.postgres.migrate import upgrade
from coupon_core.domain.dead_letters import Rejection
from coupon_core.domain.delivery import Delivered, Position
from coupon_core.domain.persisting import IssuePersister, LockTimes
from coupon_core.domain.reservations import ReleaseOutcome
from functions.worker import app as worker_app
from functions.worker import dependencies, dlq_dependencies
from functions.worker import dlq as dlq_app
from local.stack.postgres import start_postgres
from local.testkit.kafka_topics import client_options, create_topic
from local.testkit.lambda_events import InProcessContext, sqs_event
from lua_redis.client import connect
from lua_redis.lock import RedisCouponLocks, held_lock, issue_lock_name
from tests.services.worker_support import (
    Batch,
    coupon_counts,
    drain,
    failed_items,
    issued_users,
    open_coupon,
    reserve,
)


class NoDlq:
    """Rejections counted, not sent: this test looks at the database."""

    def send(self, rejections: Sequence[Rejection]) -> set[Position]:
        return set()


@dataclass
class Queue:
    sqs: Any
    url: str

    def letters(self) -> list[dict[str, Any]]:
        return drain(self.sqs, self.url)


@pytest.fixture
def dlq(pipeline) -> Queue:
    """Worker and DLQ handler wired to the real services; the DLQ is an SQS queue in moto."""
    return Queue(pipeline.sqs, pipeline.dlq_url)


def run_worker(event: dict[str, Any]) -> dict[str, Any]:
    return worker_app.handler(event, InProcessContext())


def run_dlq(bodies: list[str]) -> dict[str, Any]:
    return dlq_app.handler(sqs_event(bodies), InProcessContext())


def test_a_batch_of_many_coupons_persists_once_and_a_replay_changes_nothing(dlq, store, migrated_engine):
    coupons = [open_coupon(migrated_engine, store, total=20) for _ in range(4)]
    batch = Batch()
    for coupon_id in coupons:
        for message in reserve(store, coupon_id, range(1, 16)):
            batch.add(message)

    first = run_worker(batch.event())
    replay = run_worker(batch.event())

    assert first == {"batchItemFailures": []}
    assert replay == {"batchItemFailures": []}
    for coupon_id in coupons:
        assert issued_users(migrated_engine, coupon_id) == list(range(1, 16))
        assert coupon_counts(migrated_engine, coupon_id) == {"remaining": 5, "issued": 15, "outbox": 15, "failures": 0}
    assert dlq.letters() == []


def test_no_stock_in_the_database_is_rejected_released_and_recorded(dlq, store, migrated_engine):
    coupon_id = open_coupon(migrated_engine, store, total=3)
    messages = reserve(store, coupon_id, range(1, 4))
    store.release(coupon_id, 3, messages[2].reserved_at)  # as if Redis had lost user 3's place
    messages += reserve(store, coupon_id, [9])  # ... and sold it again: Redis said SUCCESS four times
    batch = Batch()
    for message in messages:
        batch.add(message)

    assert run_worker(batch.event()) == {"batchItemFailures": []}
    letters = dlq.letters()

    assert [(letter["kind"], letter["userId"], letter["reason"]) for letter in letters] == [
        ("coupon.issue.rejected", 9, "NO_STOCK")
    ]
    assert letters[0]["requestId"] == str(messages[3].request_id)
    assert letters[0]["source"]["topic"] == "coupon.issue.v1"
    assert store.reservation_time(coupon_id, 9) is not None  # released by the DLQ handler, not the worker

    assert run_dlq([json.dumps(letters[0])]) == {"batchItemFailures": []}

    assert store.reservation_time(coupon_id, 9) is None
    assert coupon_counts(migrated_engine, coupon_id) == {"remaining": 0, "issued": 3, "outbox": 3, "failures": 1}
    # I3: every SUCCESS is an issue or a recorded failure with its reservation released
    assert issued_users(migrated_engine, coupon_id) == [1, 2, 3]


def test_malformed_records_are_rejected_with_reasons_and_do_not_stop_the_rest(dlq, store, migrated_engine):
    coupon_id = open_coupon(migrated_engine, store, total=10)
    first, second = reserve(store, coupon_id, [1, 2])
    bad_values = {
        "record has no value": None,
        "value is not JSON": b"{nope",
        "missing fields: userId, requestId, reservedAt": json.dumps({"v": 1, "couponId": coupon_id}).encode(),
        "userId must be an integer, got str": json.dumps(
            {"v": 1, "couponId": coupon_id, "userId": "2", "requestId": str(second.request_id), "reservedAt": 1}
        ).encode(),
    }
    batch = Batch(partitions=1)
    batch.add(first)
    for value in bad_values.values():
        batch.add_raw(0, value)
    batch.add(second)
    event = batch.event()
    event["records"]["coupon.issue.v1-0"].append(
        {"topic": "coupon.issue.v1", "partition": 0, "offset": 99, "value": "%%% not base64 %%%"}
    )

    response = run_worker(event)

    assert response == {"batchItemFailures": []}
    assert issued_users(migrated_engine, coupon_id) == [1, 2]
    letters = dlq.letters()
    assert {letter["kind"] for letter in letters} == {"coupon.issue.malformed"}
    reasons = [letter["reason"] for letter in letters]
    assert len(reasons) == 5
    for fragment in [*bad_values, "value is not base64"]:
        assert any(fragment in reason for reason in reasons), (fragment, reasons)


def test_a_held_lock_makes_exactly_that_coupon_transient(dlq, store, migrated_engine, redis_client):
    blocked = open_coupon(migrated_engine, store, total=10)
    free = open_coupon(migrated_engine, store, total=10)
    batch = Batch(partitions=1)
    expected_failures = set()
    for message in reserve(store, blocked, [1, 2]) + reserve(store, free, [1, 2]):
        position = batch.add(message)
        if message.coupon_id == blocked:
            expected_failures.add(position)

    with held_lock(redis_client, issue_lock_name(blocked), lease_s=30, wait_s=1):
        response = run_worker(batch.event())

    assert failed_items(response) == expected_failures
    assert issued_users(migrated_engine, blocked) == []
    assert issued_users(migrated_engine, free) == [1, 2]
    assert run_worker(batch.event()) == {"batchItemFailures": []}  # the retry, once the lock is free
    assert issued_users(migrated_engine, blocked) == [1, 2]


def test_database_down_fails_exactly_its_offsets_and_the_retry_persists(dlq, store, monkeypatch, tmp_path):
    own = start_postgres(tmp_path)
    engine = engine_for_url(own.url)
    upgrade(engine)
    monkeypatch.setenv("DATABASE_URL", own.url)
    dependencies.reset()
    dlq_dependencies.reset()
    coupon_id = open_coupon(engine, store, total=10)
    batch = Batch(partitions=1)
    expected = {batch.add(message) for message in reserve(store, coupon_id, [1, 2, 3])}
    batch.add_raw(0, b"not json")  # terminal whatever the database does
    engine.dispose()
    own.stop()

    response = run_worker(batch.event())

    assert failed_items(response) == expected
    assert [letter["kind"] for letter in dlq.letters()] == ["coupon.issue.malformed"]
    revived = start_postgres(tmp_path, port=make_url(own.url).port)
    try:
        assert run_worker(batch.event()) == {"batchItemFailures": []}
        assert issued_users(engine_for_url(revived.url), coupon_id) == [1, 2, 3]
    finally:
        revived.stop()


def _worker_process(env: dict[str, str], event: dict[str, Any], results: Any) -> None:
    os.environ.update(env)
    with mock_aws():
        sqs = boto3.client("sqs", region_name="eu-west-1")
        os.environ["DLQ_URL"] = sqs.create_queue(QueueName="coupon-dlq")["QueueUrl"]
        response = worker_app.handler(event, InProcessContext())
        results.put((response, {letter["userId"] for letter in drain(sqs, os.environ["DLQ_URL"])}))


def test_two_workers_on_one_coupon_at_once_never_oversell_nor_duplicate(dlq, store, migrated_engine):
    coupon_id = open_coupon(migrated_engine, store, total=50, redis_total=80)
    messages = {message.user_id: message for message in reserve(store, coupon_id, range(1, 81))}
    events = []
    for users in (range(1, 61), range(21, 81)):  # users 21..60 arrive twice, once in each process
        batch = Batch(partitions=1)
        for user in users:
            batch.add(messages[user])
        events.append(batch.event())
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    env = {name: os.environ[name] for name in ("REDIS_URL", "DATABASE_URL", "WORKER_LOCK_WAIT_S", "AWS_DEFAULT_REGION")}
    env |= {"WORKER_LOCK_WAIT_S": "20", "WORKER_LOCK_LEASE_S": "30", "PYTHONPATH": os.pathsep.join(sys.path)}
    workers = [context.Process(target=_worker_process, args=(env, event, results)) for event in events]
    for worker in workers:
        worker.start()
    answers = [results.get(timeout=120) for _ in workers]
    for worker in workers:
        worker.join()

    assert [response for response, _ in answers] == [{"batchItemFailures": []}] * 2
    users = issued_users(migrated_engine, coupon_id)
    assert len(users) == 50
    assert len(set(users)) == 50
    assert coupon_counts(migrated_engine, coupon_id) == {"remaining": 0, "issued": 50, "outbox": 50, "failures": 0}
    rejected = set().union(*(users for _, users in answers))  # a user rejected by both workers counts once
    assert rejected == set(range(1, 81)) - set(users)
    assert len(rejected) == 30


def test_dlq_handler_reads_on_failure_ranges_back_from_kafka(dlq, store, migrated_engine, kafka_bootstrap_servers):
    coupon_id = open_coupon(migrated_engine, store, total=10)
    topic = create_topic(kafka_bootstrap_servers, partitions=1)
    messages = reserve(store, coupon_id, [1, 2, 3])
    producer = KafkaProducer(**client_options(kafka_bootstrap_servers))
    for message in messages:
        producer.send(topic, key=message.key, value=message.encode(), partition=0).get(timeout=10)
    producer.send(topic, value=b"garbage", partition=0).get(timeout=10)
    producer.close()
    batch = Batch(partitions=1)
    batch.add(messages[0])
    run_worker(batch.event())  # user 1 persisted; users 2 and 3 never were: retries ran out
    on_failure = {
        "requestContext": {"condition": "RetryAttemptsExhausted", "approximateInvokeCount": 4},
        "responseContext": {"statusCode": 200, "executedVersion": "$LATEST", "functionError": "Unhandled"},
        "version": "1.0",
        "timestamp": "2026-11-30T10:00:00.000Z",
        "KafkaBatchInfo": {
            "batchSize": 4,
            "bootstrapServers": kafka_bootstrap_servers,
            "recordsInfo": {f"{topic}-0": {"firstRecordOffset": "0", "lastRecordOffset": "3"}},
        },
    }

    assert run_dlq([json.dumps(on_failure)]) == {"batchItemFailures": []}

    assert store.reservation_time(coupon_id, 1) is not None  # issued: kept
    assert store.reservation_time(coupon_id, 2) is None
    assert store.reservation_time(coupon_id, 3) is None
    assert coupon_counts(migrated_engine, coupon_id)["failures"] == 2
    assert run_dlq([json.dumps(on_failure)]) == {"batchItemFailures": []}  # delivered twice: no change
    assert coupon_counts(migrated_engine, coupon_id) == {"remaining": 9, "issued": 1, "outbox": 1, "failures": 2}


def test_a_stale_dead_letter_does_not_release_a_newer_reservation(dlq, store, migrated_engine):
    coupon_id = open_coupon(migrated_engine, store, total=10)
    (old,) = reserve(store, coupon_id, [5])
    store.release(coupon_id, 5, old.reserved_at)
    while store.reserve(coupon_id, 5).reserved_at == old.reserved_at:  # same millisecond
        store.release(coupon_id, 5, old.reserved_at)
    newer = store.reservation_time(coupon_id, 5)
    letter = {
        "kind": "coupon.issue.rejected",
        "v": 1,
        "couponId": coupon_id,
        "userId": 5,
        "requestId": str(old.request_id),
        "reservedAt": old.reserved_at,
        "reason": "NO_STOCK",
        "source": {"topic": "coupon.issue.v1", "partition": 0, "offset": 7},
        "failedAt": "2026-11-30T10:00:00Z",
    }

    assert run_dlq([json.dumps(letter), json.dumps(letter)]) == {"batchItemFailures": []}

    assert store.reservation_time(coupon_id, 5) == newer
    counts = coupon_counts(migrated_engine, coupon_id)
    assert counts["failures"] == 1
    with migrated_engine.connect() as connection:
        source = connection.execute(text("SELECT source FROM coupon_issue_failures")).scalar_one()
    assert source["release"] == ReleaseOutcome.STALE.value


def test_unreadable_dead_letters_are_reported_failed(dlq):
    bodies = [
        "not json",
        "[1]",
        json.dumps({"kind": "something.else", "v": 1}),
        json.dumps({"kind": "coupon.issue.rejected", "v": 1, "couponId": 1}),
        json.dumps({"kind": "coupon.issue.malformed", "v": 1, "reason": "value is not JSON"}),
        json.dumps({"KafkaBatchInfo": {"recordsInfo": {}}}),
    ]
    response = run_dlq(bodies)
    assert {item["itemIdentifier"] for item in response["batchItemFailures"]} == {f"m{i}" for i in range(len(bodies))}


def test_a_replay_after_its_dead_letter_does_not_issue_the_coupon(dlq, store, migrated_engine):
    """I3: a request settled as FAILED stays FAILED when its record comes round again (a redrive,
    an offset reset); its copy may meanwhile have been sold to someone else."""
    coupon_id = open_coupon(migrated_engine, store, total=1)
    (failed,) = reserve(store, coupon_id, [7])
    batch = Batch(partitions=1)
    position = batch.add(failed)
    topic, offset = position[0].rsplit("-", 1)[0], position[1]
    letter = Rejection(Delivered(Position(topic, 0, offset), failed), "RETRIES_EXHAUSTED")
    assert run_dlq([json.dumps(letter.envelope())]) == {"batchItemFailures": []}
    (winner,) = reserve(store, coupon_id, [8])  # the released copy goes to the next user
    batch.add(winner)

    assert run_worker(batch.event()) == {"batchItemFailures": []}  # the replay, then the winner's record

    assert issued_users(migrated_engine, coupon_id) == [8]
    assert coupon_counts(migrated_engine, coupon_id) == {"remaining": 0, "issued": 1, "outbox": 1, "failures": 1}
    assert dlq.letters() == []  # settled already: not dead-lettered a second time


def test_a_dead_letter_racing_the_worker_never_leaves_a_request_both_issued_and_failed(dlq, store, migrated_engine):
    """The worker commits the issue while the DLQ handler settles the same request: the handler
    waits for the worker's transaction on the coupon row, then finds the issue and changes nothing."""
    coupon_id = open_coupon(migrated_engine, store, total=5)
    (message,) = reserve(store, coupon_id, [7])
    letter = Rejection(Delivered(Position("coupon.issue.v1", 0, 0), message), "RETRIES_EXHAUSTED").envelope()
    answers: list[dict[str, Any]] = []
    with migrated_engine.connect() as worker, worker.begin():  # the worker, midway through its transaction
        worker.execute(text("SELECT id FROM coupons WHERE id = :c FOR UPDATE"), {"c": coupon_id})
        worker.execute(
            text("INSERT INTO coupon_issues (coupon_id, user_id, request_id, reserved_at) VALUES (:c, 7, :r, now())"),
            {"c": coupon_id, "r": message.request_id},
        )
        worker.execute(text("UPDATE coupons SET remaining_quantity = remaining_quantity - 1 WHERE id = :c"),
                       {"c": coupon_id})  # fmt: skip
        handler = threading.Thread(target=lambda: answers.append(run_dlq([json.dumps(letter)])))
        handler.start()
        handler.join(timeout=1)  # the handler runs now, while the issue is not committed yet
    handler.join(timeout=30)

    assert answers == [{"batchItemFailures": []}]
    assert coupon_counts(migrated_engine, coupon_id)["failures"] == 0
    assert store.reservation_time(coupon_id, 7) == message.reserved_at  # an issued user's copy stays held


def test_two_workers_whose_lock_lease_runs_out_are_kept_apart_by_the_database(store, migrated_engine, redis_url):
    """The issue lock is a lease: a worker stuck longer than it (here, on the coupon row the test
    holds) loses it to the next one. Both then write the same coupon, overlapping users, and the
    database alone keeps I1 and I2: the row lock serialises them, the unique key and the stock
    guard do the rest."""
    coupon_id = open_coupon(migrated_engine, store, total=50, redis_total=80)
    messages = {message.user_id: message for message in reserve(store, coupon_id, range(1, 81))}
    batches = {
        name: [Delivered(Position("coupon.issue.v1", 0, user), messages[user]) for user in users]
        for name, users in (("A", range(1, 61)), ("B", range(21, 81)))
    }
    events: list[tuple[str, str]] = []

    class Watched(RedisCouponLocks):
        def __init__(self, name: str) -> None:
            super().__init__(connect(redis_url, socket_timeout=10))
            self._name = name

        @contextlib.contextmanager
        def issue(self, coupon_id: int, *, lease_s: int, wait_s: int) -> Iterator[None]:
            with super().issue(coupon_id, lease_s=lease_s, wait_s=wait_s):
                events.append((self._name, "locked"))
                yield
            events.append((self._name, "written"))

    def work(name: str) -> None:
        persister = IssuePersister(
            SqlLedger(engine_for_url(migrated_engine.url)), Watched(name), NoDlq(), LockTimes(lease_s=1, wait_s=1)
        )
        verdicts[name] = persister.persist(batches[name])

    verdicts: dict[str, Any] = {}
    with migrated_engine.connect() as blocker, blocker.begin():  # a slow transaction on the coupon row
        blocker.execute(text("SELECT id FROM coupons WHERE id = :c FOR UPDATE"), {"c": coupon_id})
        first = threading.Thread(target=work, args=("A",))
        first.start()
        while ("A", "locked") not in events:
            time.sleep(0.05)
        second = threading.Thread(target=work, args=("B",))
        second.start()
        while ("B", "locked") not in events:  # A's lease (1 s) runs out while A waits on the row
            time.sleep(0.05)
    first.join(timeout=60)
    second.join(timeout=60)

    assert events.index(("B", "locked")) < events.index(("A", "written"))  # both held "the" lock at once
    users = issued_users(migrated_engine, coupon_id)
    assert len(users) == len(set(users)) == 50
    assert coupon_counts(migrated_engine, coupon_id) == {"remaining": 0, "issued": 50, "outbox": 50, "failures": 0}
    rejected = {p.offset for name in "AB" for p, v in verdicts[name].items() if v.outcome.value == "REJECTED"}
    assert rejected == set(range(1, 81)) - set(users)
