"""The intake handler against real Valkey, PostgreSQL and Tansu."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import pytest
import redis
from sqlalchemy import text

from coupon_cdk.config import CONNECTIONS_PER_INTAKE, INIT_CONNECTION_ATTEMPTS
from coupon_core.adapters.postgres.catalog import SqlCouponCatalog
from functions.intake.dependencies import open_connections, reset, wiring
from local.stack.processes import Service, free_port, url_port, with_port
from local.stack.tansu import proxied_broker, start_tansu
from local.stack.tls import proxy_ends
from local.stack.valkey import start_valkey
from local.testkit.bad_requests import bad_requests
from local.testkit.fault_proxy import FaultProxy
from local.testkit.kafka_topics import create_topic, read_all
from local.testkit.stores import WholeStore
from local.testkit.tables import row_counts
from lua_redis.client import connect
from lua_redis.keys import build_claim_key, reserved_key
from lua_redis.store import rebuild_key
from tests.services.intake_support import (
    call,
    create_coupon,
    first_request_after_the_loss,
    issue,
    issue_until_answered,
    produces_under_way_have_ended,
)
from tests.services.pipeline_support import build, rebuild
from tests.services.support import open_coupon


@pytest.fixture
def topic(pipeline) -> str:
    """The intake wired to the shared services through its environment, with a fresh topic."""
    return pipeline.topic


def test_success_puts_exactly_one_record_in_the_agreed_format(topic, kafka_bootstrap_servers, store):
    coupon_id = create_coupon(10)

    answer = issue(coupon_id, 7)

    assert answer.status_code == 202
    assert answer.body["status"] == "SUCCESS"
    (record,) = read_all(kafka_bootstrap_servers, topic)
    value = json.loads(record.value)
    assert record.key == str(coupon_id).encode()
    assert value == {
        "v": 1,
        "couponId": coupon_id,
        "userId": 7,
        "requestId": answer.body["requestId"],
        "reservedAt": store.reservation_time(coupon_id, 7),
    }


def test_refusals_through_the_real_stack(topic, kafka_bootstrap_servers):
    one = create_coupon(1)
    later = create_coupon(5, starts_in=timedelta(hours=1))
    over = create_coupon(5, starts_in=timedelta(hours=-3), lasts=timedelta(hours=1))
    long_over = create_coupon(5, starts_in=timedelta(days=-30), lasts=timedelta(days=1))

    assert issue(one, 1).status_code == 202
    assert (issue(one, 1).status_code, issue(one, 1).body["status"]) == (409, "DUPLICATE")
    assert (issue(one, 2).status_code, issue(one, 2).body["status"]) == (409, "SOLD_OUT")
    assert issue(later, 1).body == {
        "status": "NOT_OPEN",
        "error": f"the issue window of coupon {later} has not opened yet",
    }
    assert issue(over, 1).body["status"] == "ENDED"
    assert issue(long_over, 1).body["status"] == "ENDED"
    assert (issue(999_999, 1).status_code, issue(999_999, 1).body["status"]) == (404, "COUPON_NOT_FOUND")
    assert len(read_all(kafka_bootstrap_servers, topic)) == 1


def test_status_goes_from_none_to_pending_to_issued_or_failed(topic, migrated_engine, store):
    coupon_id = create_coupon(10)

    def status(user: int) -> str:
        answer = call("GET", f"/coupons/{coupon_id}/issues/{user}")
        assert answer.status_code == 200
        return str(answer.body["status"])

    assert status(7) == "NONE"
    accepted = issue(coupon_id, 7).body
    issue(coupon_id, 8)
    assert status(7) == "PENDING"
    with migrated_engine.begin() as connection:  # what the worker and the DLQ handler will write
        connection.execute(
            text("INSERT INTO coupon_issues (coupon_id, user_id, request_id, reserved_at) VALUES (:c, 7, :r, now())"),
            {"c": coupon_id, "r": accepted["requestId"]},
        )
        connection.execute(
            text(
                "INSERT INTO coupon_issue_failures (coupon_id, user_id, request_id, reason, source, released) "
                "VALUES (:c, 8, gen_random_uuid(), 'NO_STOCK', '{}', true)"
            ),
            {"c": coupon_id},
        )
    store.release(coupon_id, 8, store.reservation_time(coupon_id, 8))
    assert status(7) == "ISSUED"
    assert status(8) == "FAILED"
    assert call("GET", f"/coupons/{coupon_id + 100}/issues/7").status_code == 404


def test_admin_read_shows_database_and_redis_counts(topic):
    coupon_id = create_coupon(10)
    issue(coupon_id, 1)
    issue(coupon_id, 2)

    answer = call("GET", f"/coupons/{coupon_id}")

    assert answer.status_code == 200
    assert {k: answer.body[k] for k in ("status", "totalQuantity", "remainingQuantity", "issued", "reserved")} == {
        "status": "OK",
        "totalQuantity": 10,
        "remainingQuantity": 10,
        "issued": 0,
        "reserved": 2,
    }


def test_fifty_concurrent_first_requests_build_a_cold_coupon_once(
    topic, kafka_bootstrap_servers, monkeypatch, redis_client, store
):
    """A coupon whose state Redis never got (it was down at creation), in its window: the first
    request starts the wait for produces under way; once it is over, of 50 concurrent first
    requests exactly one has the rebuild function read the database and Kafka (each asks it,
    through Lambda's API; the others find the state built once they hold its lock). One whose ask
    outwaits the lock (1 s: the build's thread shares this process's two cores with 49 more; on
    AWS the rebuild's reserved concurrency throttles most of them) answers UNAVAILABLE with
    nothing reserved, and its retry, as a client sends it after Retry-After, a SUCCESS."""
    coupon_id = create_coupon(100)
    redis_client.flushall()
    assert wiring().service.issue(coupon_id, 999).outcome.value == "UNAVAILABLE"
    assert produces_under_way_have_ended(redis_client, coupon_id)
    loads: list[int] = []
    original = SqlCouponCatalog.issued_users

    def counted(self, wanted: int):
        loads.append(wanted)
        return original(self, wanted)

    monkeypatch.setattr(SqlCouponCatalog, "issued_users", counted)
    # 50 containers that finished their INIT: each holds its open (TLS) connections when the
    # burst arrives; here they share one pool, opened now rather than by 50 handshakes at once.
    open_connections()
    pool = wiring().client.connection_pool
    warm = [pool.get_connection() for _ in range(50)]
    for connection in warm:
        pool.release(connection)
    while redis_client.exists(build_claim_key(coupon_id)):  # the first request's claim (a second)
        time.sleep(0.05)  # else every one of the 50 would be told BUILDING
    start = threading.Barrier(50)
    outcomes: dict[int, str] = {}

    def request(user: int) -> None:
        start.wait()
        # The domain, not the HTTP handler: Powertools keeps the current event on its (module-level)
        # resolver, which is right for Lambda's one invocation per container at a time, not for threads.
        outcomes[user] = wiring().service.issue(coupon_id, user).outcome.value

    threads = [threading.Thread(target=request, args=(user,)) for user in range(1, 51)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    refused = sorted(user for user, outcome in outcomes.items() if outcome == "UNAVAILABLE")
    assert {user: outcome for user, outcome in outcomes.items() if user not in refused} == dict.fromkeys(
        set(range(1, 51)) - set(refused), "SUCCESS"
    )
    assert all(store.reservation_time(coupon_id, user) is None for user in refused)
    assert [wiring().service.issue(coupon_id, user).outcome.value for user in refused] == ["SUCCESS"] * len(refused)
    assert loads == [coupon_id]
    assert not redis_client.exists(rebuild_key(coupon_id))  # the wait is closed with the rebuild
    assert len(read_all(kafka_bootstrap_servers, topic)) == 50


def test_broker_stopped_answers_503_releases_what_was_never_sent_and_reconcile_the_rest(
    topic, monkeypatch, store, redis_client, tmp_path
):
    """The broker dies after a SUCCESS. The next request's record may sit in the producer when
    the broker goes, if the producer has not yet seen its connection close: it may or may not have
    been written, so it answers UNCONFIRMED and keeps its reservation; if it has, nothing is sent
    (UNAVAILABLE, released). Later requests never get a record out (no connection to the leader):
    UNAVAILABLE, released at once. Once the broker is back, reconcile finds an unconfirmed record
    nowhere and releases its reservation (time is moved past the production skew, not slept
    through)."""
    broker = start_tansu(tmp_path)
    own_topic = create_topic(broker.url)
    monkeypatch.setenv("KAFKA_BOOTSTRAP_SERVERS", broker.url)
    monkeypatch.setenv("KAFKA_TOPIC", own_topic)
    monkeypatch.setenv("KAFKA_PRODUCE_TIMEOUT_MS", "1000")
    reset()
    open_connections()  # as the container's INIT does: the first produce finds its connection made
    coupon_id = create_coupon(10)
    assert issue(coupon_id, 1).status_code == 202
    broker.stop()

    answers = [issue(coupon_id, user) for user in (2, 3, 4)]

    statuses = [(a.status_code, a.body["status"], a.headers["Retry-After"]) for a in answers]
    assert statuses[0] in {(503, "UNCONFIRMED", "1"), (503, "UNAVAILABLE", "1")}
    assert statuses[1:] == [(503, "UNAVAILABLE", "1"), (503, "UNAVAILABLE", "1")]
    held = store.reservation_time(coupon_id, 2)
    assert (held is not None) is (answers[0].body["status"] == "UNCONFIRMED")
    assert (store.reservation_time(coupon_id, 3), store.reservation_time(coupon_id, 4)) == (None, None)

    revived = start_tansu(tmp_path, port=int(broker.url.rsplit(":", 1)[1]))  # in-memory: the topic is new
    try:
        assert create_topic(revived.url, name=own_topic) == own_topic
        again = issue_until_answered(coupon_id, 3, idempotency_key="user-3")  # the producer's backoff: up to 1 s
        assert again.status_code == 202
        if held is not None:
            redis_client.zadd(reserved_key(coupon_id), {"2": held - 20_000}, xx=True)  # 20 s later
        (reconciled,) = rebuild({"couponId": coupon_id})["reconciled"]
        assert reconciled["released"] == (held is not None)
        assert store.reservation_time(coupon_id, 2) is None
        records = [json.loads(r.value) for r in read_all(revived.url, own_topic)]
        assert {(r["userId"], r["requestId"]) for r in records} == {(3, again.body["requestId"])}  # once or twice
    finally:
        revived.stop()


def test_redis_stopped_answers_503(topic, monkeypatch, tmp_path, kafka_bootstrap_servers):
    valkey = start_valkey(tmp_path)
    monkeypatch.setenv("REDIS_URL", valkey.url)
    reset()
    coupon_id = create_coupon(10)
    assert issue(coupon_id, 1).status_code == 202
    valkey.stop()

    answer = issue(coupon_id, 2)

    assert (answer.status_code, answer.body["status"]) == (503, "UNAVAILABLE")
    assert len(read_all(kafka_bootstrap_servers, topic)) == 1


def test_bad_input_changes_nothing(topic, redis_client, migrated_engine, kafka_bootstrap_servers):
    coupon_id = create_coupon(10)
    issue(coupon_id, 1)

    def snapshot() -> tuple:
        keys = sorted(redis_client.keys("*"))
        redis_state = {key: redis_client.dump(key) for key in keys if not key.startswith("lock")}
        return redis_state, row_counts(migrated_engine), len(read_all(kafka_bootstrap_servers, topic))

    before = snapshot()
    for bad in bad_requests(coupon_id):
        answer = call(bad.method, bad.path, bad.body, raw_body=bad.raw)
        assert 400 <= answer.status_code < 500, (bad, answer)
        assert answer.body["error"], answer

    assert snapshot() == before
    assert WholeStore(redis_client).reserved_count(coupon_id) == 1


@contextlib.contextmanager
def silent_server() -> Iterator[int]:
    """A TCP server that accepts connections and never answers: a network that drops silently."""
    listener = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                accepted.append(listener.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        for connection in accepted:
            connection.close()
        listener.close()


@pytest.mark.parametrize("database", ["stopped", "silent"])
def test_database_unreachable_answers_503_json_and_leaves_redis_as_it_was(topic, monkeypatch, redis_client, database):
    """A cold coupon, the status route and the admin read need the database: with it stopped
    (connection refused) or silent (a dropped network), each answers 503 with Retry-After in a
    bounded time (a silent server would hang pg8000 forever), and Redis holds no state and no
    lock of the coupon afterwards. Silent, each function's engine waits out its connect timeout
    once (the status route's and the admin read's are the coupons function's one engine)."""
    with contextlib.ExitStack() as stack:
        port = stack.enter_context(silent_server()) if database == "silent" else free_port()
        monkeypatch.setenv("DATABASE_URL", f"postgresql+pg8000://postgres@127.0.0.1:{port}/coupons?sslmode=verify-full")
        reset()
        reads = ["/coupons/424242/issues/7"] + (["/coupons/424242"] if database == "stopped" else [])
        answers = [issue(424242, 7)] + [call("GET", path) for path in reads]

    assert [(a.status_code, a.body["status"], a.headers.get("Retry-After")) for a in answers] == [
        (503, "UNAVAILABLE", "1")
    ] * len(answers)
    # python-redis-lock leaves a signal list, and the registry the claim on the coupon's build, each
    # expiring by itself within a second; nothing else
    transient = ("lock-signal:", build_claim_key(424242))
    assert [key for key in redis_client.keys("*424242*") if not key.startswith(transient)] == []
    assert redis_client.pttl(build_claim_key(424242)) <= 1000  # gone, or going within the second


def test_a_reserve_whose_reply_is_lost_answers_the_users_own_success_and_publishes_once(
    topic, monkeypatch, redis_url, kafka_bootstrap_servers, store
):
    """The connection drops after Valkey ran the reserve: the client's retry (production
    settings: one retry on a connection error) must get the request's own SUCCESS back, not
    DUPLICATE, and exactly one record goes to Kafka."""
    with FaultProxy("127.0.0.1", url_port(redis_url), tls=proxy_ends()) as proxy:
        monkeypatch.setenv("REDIS_URL", with_port(redis_url, proxy.port))
        reset()
        coupon_id = create_coupon(10)
        assert issue(coupon_id, 1).status_code == 202  # the coupon's state is built, the script loaded
        proxy.lose_reply_to(b"EVALSHA")

        answer = issue(coupon_id, 7)

    assert proxy.replies_lost == 1
    assert (answer.status_code, answer.body["status"]) == (202, "SUCCESS")
    records = [json.loads(r.value) for r in read_all(kafka_bootstrap_servers, topic)]
    assert [(r["userId"], r["requestId"]) for r in records] == [
        (1, records[0]["requestId"]),
        (7, answer.body["requestId"]),
    ]
    assert records[1]["reservedAt"] == store.reservation_time(coupon_id, 7)


ACK_LATE_S = 5.0  # an acknowledgement held back past the 3 s produce timeout


@contextlib.contextmanager
def broker_behind_a_proxy(tmp_path, monkeypatch) -> Iterator[tuple[FaultProxy, str]]:
    """The intake on a broker of its own, which tells its clients to connect through a fault
    proxy, at the default produce timeout (3 s: a fresh producer's resend bootstraps within it
    even on a squeezed machine); the proxy and the topic."""
    with proxied_broker(tmp_path) as (proxy, _):
        topic = create_topic(f"127.0.0.1:{proxy.port}")
        monkeypatch.setenv("KAFKA_BOOTSTRAP_SERVERS", f"127.0.0.1:{proxy.port}")
        monkeypatch.setenv("KAFKA_TOPIC", topic)
        reset()
        open_connections()  # as the container's INIT does: the TLS handshakes come before the first request
        yield proxy, topic


def test_a_produce_whose_ack_comes_late_is_sent_again_and_answers_success(topic, monkeypatch, store, tmp_path):
    """The broker appended the record but its acknowledgement outlasts the produce timeout: the
    same record goes again on a fresh producer, and the user gets the SUCCESS that is true."""
    with broker_behind_a_proxy(tmp_path, monkeypatch) as (proxy, own_topic):
        coupon_id = create_coupon(10)
        assert issue(coupon_id, 1).status_code == 202
        proxy.delay_reply_to(b'"requestId"', ACK_LATE_S)

        answer = issue(coupon_id, 7)

        records = [json.loads(r.value) for r in read_all(f"127.0.0.1:{proxy.port}", own_topic)]
    assert proxy.replies_delayed == 1
    assert (answer.status_code, answer.body["status"]) == (202, "SUCCESS")
    assert {r["requestId"] for r in records if r["userId"] == 7} == {answer.body["requestId"]}  # once or twice
    assert store.reservation_time(coupon_id, 7) is not None


def test_a_produce_never_acknowledged_answers_unconfirmed_and_keeps_the_reservation(
    topic, monkeypatch, store, tmp_path
):
    """Neither the send nor the resend is acknowledged in time, yet the broker has the record
    (twice: the worker persists it once): the user is told it may have been accepted (not
    "nothing was reserved"), and the reservation stays for the worker, which issues it."""
    with broker_behind_a_proxy(tmp_path, monkeypatch) as (proxy, own_topic):
        coupon_id = create_coupon(10)
        proxy.delay_reply_to(b'"requestId"', ACK_LATE_S, times=2)

        answer = issue(coupon_id, 7)
        status = call("GET", f"/coupons/{coupon_id}/issues/7")
        records = [json.loads(r.value) for r in read_all(f"127.0.0.1:{proxy.port}", own_topic)]

    assert proxy.replies_delayed == 2
    assert (answer.status_code, answer.body["status"], answer.headers["Retry-After"]) == (503, "UNCONFIRMED", "1")
    assert f"/coupons/{coupon_id}/issues/7" in answer.body["error"]
    assert status.body["status"] == "PENDING"
    assert {r["userId"] for r in records} == {7}  # in the log: the worker will issue it


def test_the_same_idempotency_key_and_body_answer_the_same_and_another_body_is_refused(
    topic, kafka_bootstrap_servers, store
):
    """A client that lost its answer sends the request again with its Idempotency-Key: it gets
    its own SUCCESS back (same requestId, same time); the key with another body is 422."""
    coupon_id = create_coupon(10)

    first = issue(coupon_id, 7, idempotency_key="order-7-a")
    again = issue(coupon_id, 7, idempotency_key="order-7-a")
    other_body = issue(coupon_id, 8, idempotency_key="order-7-a")
    new_key = issue(coupon_id, 7, idempotency_key="order-7-b")

    assert (first.status_code, again.status_code) == (202, 202)
    assert again.body == first.body
    assert (other_body.status_code, other_body.body["status"]) == (422, "KEY_REUSED")
    assert (new_key.status_code, new_key.body["status"]) == (409, "DUPLICATE")
    assert store.reservation_time(coupon_id, 8) is None  # the refused request changed nothing
    records = [json.loads(r.value) for r in read_all(kafka_bootstrap_servers, topic)]
    assert {(r["userId"], r["requestId"]) for r in records} == {(7, first.body["requestId"])}


@contextlib.contextmanager
def replicated_valkey(scratch: Path) -> Iterator[tuple[Service, Service, redis.Redis]]:
    """A Valkey primary and a replica in sync with it, and a client of the replica; both stopped after."""
    primary = start_valkey(scratch)
    # The replica's first full sync goes at once, not after Valkey's default 5 s of waiting for
    # more replicas to share the transfer (repl-diskless-sync-delay): there is only this one.
    with contextlib.closing(connect(primary.url)) as primary_client:
        primary_client.config_set("repl-diskless-sync-delay", 0)
    replica = start_valkey(scratch, replica_of=primary)
    try:
        replica_client = redis.Redis.from_url(replica.url, decode_responses=True)
        deadline = time.monotonic() + 30
        while replica_client.info("replication").get("master_link_status") != "up":
            assert time.monotonic() < deadline, "the replica did not sync with its primary in 30 s"
            time.sleep(0.1)
        yield primary, replica, replica_client
    finally:
        replica.stop()
        primary.stop()


def test_with_redis_wait_a_success_is_on_a_replica_first_and_without_one_nothing_is_reserved(
    topic, monkeypatch, tmp_path
):
    """REDIS_WAIT_REPLICAS=1: the SUCCESS is answered once a replica has the reservation (so an
    asynchronous failover cannot lose it); with the replica gone the request is 503 and released.

    The SUCCESS half waits as long as the setting allows: it proves an order (replica, then
    answer), and a loaded machine's stall must not turn it into a 503. The fault half runs at
    the default wait."""
    with replicated_valkey(tmp_path) as (primary, replica, replica_client):
        monkeypatch.setenv("REDIS_URL", primary.url)
        monkeypatch.setenv("REDIS_WAIT_REPLICAS", "1")
        monkeypatch.setenv("REDIS_WAIT_TIMEOUT_MS", "2000")
        reset()
        coupon_id = create_coupon(10)

        assert issue(coupon_id, 1).status_code == 202
        assert replica_client.zscore(reserved_key(coupon_id), "1") is not None  # there before the answer
        replica.stop()
        monkeypatch.delenv("REDIS_WAIT_TIMEOUT_MS")
        reset()
        answer = issue(coupon_id, 2)
        assert (answer.status_code, answer.body["status"]) == (503, "UNAVAILABLE")
        assert WholeStore(connect(primary.url)).reservation_time(coupon_id, 2) is None


def test_the_wait_covers_the_reservation_whatever_connection_asks_and_never_one_the_primary_lost(tmp_path):
    """WAIT counts the replicas that have its own connection's writes: one opened after the
    reserve's (a retry, a failover) has none, and a bare WAIT there says "replicated" at once.
    The store's WAIT follows a write of its own that follows the reservation (confirm.lua), and
    says 0 for a reservation the primary it reaches does not hold."""
    with replicated_valkey(tmp_path) as (primary, _, replica_client):
        reserving = WholeStore(connect(primary.url))
        reserving.reconcile(open_coupon(5, total=3), {}, release_before=None)
        held = reserving.reserve(5, 1)
        assert held.reserved_at is not None

        asking = WholeStore(connect(primary.url))  # another connection: none of its own writes yet
        assert asking.wait_for_replicas(5, 1, held.reserved_at, 1, 1000) == 1
        assert replica_client.zscore(reserved_key(5), "1") == held.reserved_at  # on the replica when it said so
        assert asking.wait_for_replicas(5, 1, held.reserved_at + 1, 1, 100) == 0  # not this reservation
        connect(primary.url).zrem(reserved_key(5), "1")  # the primary lost it (as a failover would)
        assert asking.wait_for_replicas(5, 1, held.reserved_at, 1, 100) == 0
        assert connect(primary.url).wait(1, 100) == 1  # where a bare WAIT would have said replicated


def test_an_intake_container_holds_at_most_the_connections_the_sizing_counts_per_broker(
    topic, monkeypatch, store, redis_client, tmp_path
):
    """What the sizing counts (coupon_cdk.config), counted through a proxy that stands for the one
    broker, so that every connection lands on it (a hot coupon's leader, the worst case of a
    cluster): a fresh container's INIT opens ``INIT_CONNECTION_ATTEMPTS`` (the connection-rate
    quota at a cold opening), the bootstrap's closed before the producer's opens, so that at most
    ``CONNECTIONS_PER_INTAKE`` are open at once (the connection quota): at INIT, warm, and after the
    broker restarts (every connection dropped: one new one). A lost state adds none of the
    intake's: the builder function reads the records in flight (its connections are counted apart,
    before the container starts, as another container's are)."""
    with broker_behind_a_proxy(tmp_path, monkeypatch) as (proxy, _):
        coupon_id = create_coupon(10)
        redis_client.flushall()  # the state is gone: the first request has it built
        first_request_after_the_loss(redis_client, coupon_id, 1)
        assert build(coupon_id) == "READY"
        reset()  # a new container, on the coupon the previous one created
        counted: dict[str, tuple[int, int]] = {}  # phase -> (connections opened, most open at once)

        def phase(name: str, action: Callable[[], object]) -> None:
            deadline = time.monotonic() + 10
            while proxy.open_now > (1 if counted else 0) and time.monotonic() < deadline:
                time.sleep(0.05)  # what closed before the phase is counted closed
            proxy.count_from_now()
            action()
            counted[name] = (proxy.connections, proxy.peak_open)

        phase("INIT", open_connections)
        phase("warm", lambda: [issue(coupon_id, user) for user in (1, 2, 1)])
        proxy.drop_connections()  # the broker restarts
        phase("after a restart", lambda: [issue(coupon_id, user) for user in (3, 4)])
    assert counted["INIT"][0] <= INIT_CONNECTION_ATTEMPTS, counted
    assert counted["warm"][0] == 0, counted  # the INIT's connection serves every request
    assert counted["after a restart"][0] == 1, counted
    assert all(peak <= CONNECTIONS_PER_INTAKE for _, peak in counted.values()), counted
    assert [store.reservation_time(coupon_id, user) is not None for user in (1, 2, 3, 4)] == [True] * 4


def test_a_container_beyond_the_brokers_connection_quota_answers_503_with_nothing_reserved(
    topic, monkeypatch, store, tmp_path
):
    """More producers than the broker takes connections (MSK: 3,000 IAM connections a broker):
    the broker refuses the last container's connections; its request gets no connection to the
    leader within the produce timeout, so nothing was sent: 503 with Retry-After, the reservation
    released, no record. Once a container goes (Lambda scales in), the next request is a SUCCESS."""
    with broker_behind_a_proxy(tmp_path, monkeypatch) as (proxy, own_topic):
        coupon_id = create_coupon(10)
        reset()  # the handler's container starts last
        first = wiring.__wrapped__()  # a container of its own, warm: it holds the quota's one connection
        first.publisher.connect()
        deadline = time.monotonic() + 10
        while proxy.open_now != 1 and time.monotonic() < deadline:
            time.sleep(0.05)  # the handler's earlier container's connection counted closed
        proxy.limit_open_connections(1)

        refused = issue(coupon_id, 7)
        nothing_reserved = store.reservation_time(coupon_id, 7) is None
        first.publisher.close()  # scaled in
        first.client.close()
        again = issue_until_answered(coupon_id, 7)
        proxy.limit_open_connections(0)  # the test's own reader
        records = [json.loads(r.value)["userId"] for r in read_all(f"127.0.0.1:{proxy.port}", own_topic)]
    assert (refused.status_code, refused.body["status"], refused.headers["Retry-After"]) == (503, "UNAVAILABLE", "1")
    assert nothing_reserved
    assert proxy.refused > 0
    assert again.status_code == 202
    assert records == [7]


def test_a_producer_refused_new_connections_sends_nothing_releases_and_keeps_trying(
    topic, monkeypatch, store, tmp_path
):
    """The broker drops the producer's connections and takes no new one (MSK's connection-rate
    quota at a cold opening, or a restart): a request gets no connection to the leader within the
    produce timeout, so nothing was sent; it answers UNAVAILABLE and its reservation is released
    (not UNCONFIRMED with a reservation held and no record). The producer is kept, and once the
    broker takes connections again the next request is a SUCCESS (on that producer, or on a fresh
    one if the first acknowledgement on the new connection outlasts the produce timeout)."""
    with broker_behind_a_proxy(tmp_path, monkeypatch) as (proxy, own_topic):
        coupon_id = create_coupon(10)
        assert issue(coupon_id, 1).status_code == 202
        producer = wiring().publisher._producer
        proxy.limit_new_connections(0.001)
        proxy.drop_connections()
        deadline = time.monotonic() + 10
        while not proxy.refused and time.monotonic() < deadline:  # the producer saw it go, and tries again
            time.sleep(0.05)

        answer = issue(coupon_id, 2)

        assert (answer.status_code, answer.body["status"], answer.headers["Retry-After"]) == (503, "UNAVAILABLE", "1")
        assert store.reservation_time(coupon_id, 2) is None
        assert wiring().publisher._producer is producer  # a leader not reached in time keeps it
        proxy.limit_new_connections(0)
        again = issue_until_answered(coupon_id, 2)
        records = [json.loads(r.value) for r in read_all(f"127.0.0.1:{proxy.port}", own_topic)]
    assert again.status_code == 202
    assert records[0]["userId"] == 1
    # the refused request (a request id of its own) sent nothing; the success once, or twice if resent
    assert {r["requestId"] for r in records[1:]} == {again.body["requestId"]}
