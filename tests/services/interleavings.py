"""The pipeline as a state machine whose rules are its steps, each run by the real code on the real
Valkey, PostgreSQL and Kafka broker (SQS from moto), for Hypothesis to interleave.

One example is one coupon on a topic of its own. A rule is one step of one component, as small
as the code lets a crash fall between two steps:

- a request through the intake's handler, with or without an ``Idempotency-Key``, and the
  retry of a keyed one (a lost answer); an intake that dies between its reserve and its produce
  (the reserve alone); a produce whose acknowledgement is lost, after the record was sent or
  before (UNCONFIRMED);
- the event source mapping: a batch delivered to the worker, its offsets committed then or later;
  a batch whose retries ran out, dead-lettered; a restart from the committed offsets (a replay);
- the DLQ handler settling what is on the DLQ;
- the reconcile split at its reads: the in-flight tail read now, applied to the coupon later
  (snapshot and changes, under the state lock); the whole run, on demand for the coupon and on
  the schedule;
- Redis losing the coupon's state (FLUSHALL, or one key evicted), and the wait of the rebuild
  gate passing;
- the copies' lifecycle: use and cancel, a copy's validity ending (time passing for it); the
  operators' top-up, close and reopen;
- time passing for the intake container's memory of refusals (on by default, on a clock of the
  machine's): within its second, or past it;
- the relay's run (the sweep of what expired, then the outbox published), and a relay that
  crashes after Kafka has a batch and before it marks it published.

After every step: I1 (no more issued than the total, no more reserved than Redis's total), I2
(no user holds two live SUCCESS answers), and every request told SUCCESS has a trace (its record
after the committed offsets, a dead letter naming it, its issue, or its recorded failure). At
the end, quiescence (everything drained, committed, a reconcile past the skew, the outbox relayed)
and then I3 and I4 exactly, and the events topic matching the database: each of the coupon's
outbox events on it (repeats dropped by event id, as a consumer does) in the outbox's order, and
each request's events folding to the status its copy has.

Each step is atomic here: the machine runs one at a time, so what it explores is the order of
the components' steps, not the interleaving inside one step (the locks and transactions, tested
with real concurrency elsewhere). docs/architecture.md says which steps are atomic and why.
"""

from __future__ import annotations

import contextlib
import json
import os
import uuid
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import redis
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule
from sqlalchemy import Engine, text

from coupon_client.api_client import Reply
from coupon_core.adapters.kafka.publisher import IssuePublisher
from coupon_core.backend_errors import StateLostError
from coupon_core.domain.issuing import MEMORY_MS
from coupon_core.domain.outbox_relay import CouponEvent, relay
from coupon_core.domain.reconcile import Holders
from coupon_core.errors import PublishUnconfirmedError
from functions.coupons import dependencies as coupons_dependencies
from functions.intake import dependencies as intake_dependencies
from functions.rebuild import dependencies as rebuild_dependencies
from functions.relay import app as relay_app
from functions.relay import dependencies as relay_dependencies
from functions.worker import dependencies as worker_dependencies
from functions.worker import dlq_dependencies
from local.testkit.kafka_topics import TopicLog, create_topic
from local.testkit.lambda_events import InProcessContext
from local.testkit.stores import WholeStore
from lua_redis import keys
from tests.clock import Clock
from tests.services.intake_support import call, create_coupon, issue, produces_under_way_have_ended
from tests.services.pipeline_support import SCHEDULE_EVENT, Pipeline, rebuild
from tests.services.worker_support import drain

USERS = st.integers(min_value=1, max_value=4)
STATUS_AFTER = {
    "COUPON_ISSUED": "ISSUED",
    "COUPON_USED": "USED",
    "COUPON_CANCELED": "CANCELED",
    "COUPON_EXPIRED": "EXPIRED",
}


class RelayCrashedError(Exception):
    """Injected: the relay dies after Kafka acknowledged a batch, before marking it published."""


@dataclass
class World:
    """The servers an example runs on, as the ``pipeline`` fixture wired them, and an events
    topic of the run's own that the relay publishes to (each example's coupon is its key)."""

    pipeline: Pipeline
    engine: Engine
    redis: redis.Redis
    events: TopicLog = field(init=False)

    def __post_init__(self) -> None:
        events_topic = create_topic(self.pipeline.bootstrap_servers, name=f"coupon.events.test-{uuid.uuid4().hex[:10]}")
        issue_topic, os.environ["KAFKA_TOPIC"] = os.environ["KAFKA_TOPIC"], events_topic  # the relay's KAFKA_TOPIC
        relay_dependencies.wiring.cache_clear()
        relay_dependencies.wiring()
        os.environ["KAFKA_TOPIC"] = issue_topic
        self.events = TopicLog(self.pipeline.bootstrap_servers, events_topic)

    def close(self) -> None:
        self.events.close()
        relay_dependencies.wiring().publisher.close()
        relay_dependencies.wiring.cache_clear()

    def fresh(self) -> Pipeline:
        """A topic and a worker group of the example's own, every function wired to them, the DLQ empty."""
        topic = create_topic(self.pipeline.bootstrap_servers)
        group = f"coupon-worker-{topic}"
        os.environ["KAFKA_TOPIC"], os.environ["KAFKA_CONSUMER_GROUP"] = topic, group
        intake_dependencies.reset()
        coupons_dependencies.reset()
        worker_dependencies.reset()
        dlq_dependencies.reset()
        rebuild_dependencies.wiring.cache_clear()
        drain(self.pipeline.sqs, self.pipeline.dlq_url)  # what a failed example left
        return Pipeline(self.pipeline.bootstrap_servers, topic, self.pipeline.sqs, self.pipeline.dlq_url, group)


@dataclass
class Told:
    """What the clients were told: SUCCESS (request id -> user), and the keyed requests."""

    success: dict[str, int] = field(default_factory=dict)
    keyed: list[tuple[int, str]] = field(default_factory=list)  # (user, Idempotency-Key)
    canceled: set[str] = field(default_factory=set)  # request ids whose copy went back to stock


class Interleavings(RuleBasedStateMachine):
    world: ClassVar[World]  # set by the test that runs the machine

    def __init__(self) -> None:
        super().__init__()
        self.pipeline = self.world.fresh()
        self.told = Told()
        self.tails: list[Holders] = []
        self.coupon = 0
        self.reissue = False
        self.clock = Clock(now=0.0)

    # -- the coupon ------------------------------------------------------------------------------

    @initialize(copies=st.integers(min_value=1, max_value=3), reissue=st.booleans())
    def open_coupon(self, copies: int, reissue: bool) -> None:
        self.coupon = create_coupon(copies, reissueAfterCancel=reissue, validDays=30)
        self.reissue = reissue
        memory = intake_dependencies.wiring().service.memory
        assert memory is not None, "the machine runs the intake as deployed: with its memory"
        memory.clock = self.clock

    @rule(seconds=st.sampled_from([0.5, MEMORY_MS / 1000]))
    def time_passes_for_the_intakes_memory(self, seconds: float) -> None:
        self.clock.now += seconds

    # -- requests (the intake) ---------------------------------------------------------------------

    @rule(user=USERS, keyed=st.booleans())
    def request(self, user: int, keyed: bool) -> None:
        key = f"key-{user}-{len(self.told.keyed)}" if keyed else None
        if key:
            self.told.keyed.append((user, key))
        self._heard(user, issue(self.coupon, user, idempotency_key=key))

    @precondition(lambda self: self.told.keyed)
    @rule(data=st.data())
    def retry_after_a_lost_answer(self, data: st.DataObject) -> None:
        user, key = data.draw(st.sampled_from(self.told.keyed))
        self._heard(user, issue(self.coupon, user, idempotency_key=key))

    @rule(user=USERS)
    def intake_dies_between_reserve_and_produce(self, user: int) -> None:
        WholeStore(self.world.redis).reserve(self.coupon, user, uuid.uuid4())

    @rule(user=USERS, sent=st.booleans())
    def produce_ack_lost(self, user: int, sent: bool) -> None:
        """The produce's acknowledgement never comes back: the record was sent, or never left."""
        original = IssuePublisher.publish

        def ack_lost(publisher: IssuePublisher, message: Any) -> None:
            if sent:
                original(publisher, message)
            raise PublishUnconfirmedError("injected: the acknowledgement was lost")

        IssuePublisher.publish = ack_lost  # type: ignore[method-assign]
        try:
            self._heard(user, issue(self.coupon, user))
        finally:
            IssuePublisher.publish = original  # type: ignore[method-assign]

    def _heard(self, user: int, answer: Reply) -> None:
        status = answer.body.get("status")
        if status == "SUCCESS":
            request_id = answer.body["requestId"]
            earlier = self.told.success.get(request_id)
            assert earlier in (None, user), f"request {request_id} answered SUCCESS for two users"
            self.told.success[request_id] = user
        else:  # UNCONFIRMED and UNAVAILABLE are 503s; I3 and I4 settle what they left
            assert answer.status_code in (404, 409, 422, 503), answer

    # -- the event source mapping, the worker and the DLQ handler -----------------------------------

    @rule(limit=st.integers(min_value=1, max_value=3), commit=st.booleans())
    def deliver_a_batch(self, limit: int, commit: bool) -> None:
        self.pipeline.run_worker(limit, commit=commit)

    @rule(limit=st.integers(min_value=1, max_value=3), commit=st.booleans())
    def dead_letter_a_batch(self, limit: int, commit: bool) -> None:
        self.pipeline.exhaust_retries(limit, commit=commit)

    @rule()
    def restart_from_the_committed_offsets(self) -> None:
        self.pipeline.replay()

    @rule()
    def settle_dead_letters(self) -> None:
        self.pipeline.run_dlq_handler()

    # -- the reconcile -------------------------------------------------------------------------------

    @precondition(lambda self: len(self.tails) < 3)
    @rule()
    def reconcile_reads_the_tail(self) -> None:
        self.tails.append(rebuild_dependencies.wiring().reconciler.read_holders())

    @precondition(lambda self: self.tails)
    @rule(data=st.data())
    def reconcile_applies_a_tail_read_earlier(self, data: st.DataObject) -> None:
        holders = self.tails.pop(data.draw(st.integers(min_value=0, max_value=len(self.tails) - 1)))
        with contextlib.suppress(StateLostError):  # the gate's wait is not over: nothing changed
            rebuild_dependencies.wiring().reconciler.reconcile_coupon(self.coupon, holders)

    @rule()
    def on_demand_reconcile(self) -> None:
        """The operators' reconcile route: the rebuild function invoked for this coupon."""
        rebuild({"couponId": self.coupon})

    @rule()
    def scheduled_reconcile(self) -> None:
        """The schedule's run: every coupon in or near its window, this example's among them."""
        rebuild(SCHEDULE_EVENT)

    # -- Redis ---------------------------------------------------------------------------------------

    @rule()
    def redis_loses_everything(self) -> None:
        self.world.redis.flushall()

    @rule(key=st.sampled_from([keys.reserved_key, keys.meta_key, keys.requests_key, keys.idempotency_key]))
    def redis_evicts_one_key(self, key: Any) -> None:
        self.world.redis.delete(key(self.coupon))

    @rule()
    def the_rebuild_gates_wait_passes(self) -> None:
        """Time passes: the produces under way at the loss have ended (none is, between two steps)."""
        produces_under_way_have_ended(self.world.redis, self.coupon)

    # -- the copies' lifecycle and the operators ------------------------------------------------------

    @rule(user=USERS)
    def use(self, user: int) -> None:
        answer = call("POST", f"/coupons/{self.coupon}/issues/{user}/use")
        assert answer.status_code in (200, 404, 409, 503), answer

    @rule(user=USERS)
    def cancel(self, user: int) -> None:
        request_id = self._issued_request(user)
        answer = call("POST", f"/coupons/{self.coupon}/issues/{user}/cancel")
        assert answer.status_code in (200, 404, 409, 503), answer
        if answer.body.get("status") == "CANCELED" and request_id is not None:
            self.told.canceled.add(request_id)

    @rule(user=USERS)
    def validity_ends(self, user: int) -> None:
        """Time passes the user's copy's validity: reads say EXPIRED at once, the relay's sweep marks it."""
        with self.world.engine.begin() as connection:
            connection.execute(
                text(
                    "UPDATE coupon_issues SET expires_at = now() - interval '1 second'"
                    " WHERE coupon_id = :c AND user_id = :u AND status = 'ISSUED'"
                ),
                {"c": self.coupon, "u": user},
            )

    @rule(copies=st.integers(min_value=1, max_value=2))
    def top_up(self, copies: int) -> None:
        assert call("POST", f"/coupons/{self.coupon}/top-up", {"copies": copies}).status_code == 200

    @rule(switch=st.sampled_from(["close", "reopen"]))
    def close_or_reopen(self, switch: str) -> None:
        assert call("POST", f"/coupons/{self.coupon}/{switch}").status_code == 200

    # -- the relay ------------------------------------------------------------------------------------

    @rule()
    def relay_runs(self) -> None:
        """The relay's scheduled run: the sweep of what expired, then the outbox published."""
        assert not relay_app.handler({}, InProcessContext())["skipped"]

    @rule(batch=st.integers(min_value=1, max_value=3))
    def relay_crashes_before_marking(self, batch: int) -> None:
        """Kafka acknowledges a batch of the outbox, and the relay dies before marking it published."""
        parts = relay_dependencies.wiring()

        def publish_then_crash(events: Sequence[CouponEvent]) -> None:
            parts.publisher.publish(events)
            raise RelayCrashedError

        with contextlib.suppress(RelayCrashedError):
            relay(parts.outbox, publish_then_crash, batch=batch, max_batches=1)

    # -- after every step ----------------------------------------------------------------------------

    @invariant()
    def i1_no_oversell(self) -> None:
        if not self.coupon:
            return
        total, remaining, held = self._database_counts()
        assert held <= total, f"I1: {held} copies held of {total}"
        assert remaining == total - held, f"the stock says {remaining} left, {total} - {held} held"
        meta_total = self.world.redis.hget(keys.meta_key(self.coupon), "total")
        reserved = WholeStore(self.world.redis).reserved_count(self.coupon)
        if meta_total is not None:
            assert reserved <= int(meta_total), f"I1: {reserved} reserved in Redis of {int(meta_total)}"

    @invariant()
    def i2_one_holding_success_per_user(self) -> None:
        """No user holds two SUCCESS answers at once: a request holds its copy while it is issued
        (not canceled), or its record is after the committed offsets and its failure not recorded."""
        if not self.told.success:
            return
        failed, _, _ = self._settled()
        holding = (self._issued_now() | self._in_the_tail()) - failed - self.told.canceled
        per_user: dict[int, set[str]] = defaultdict(set)
        for request_id, user in self.told.success.items():
            if request_id in holding:
                per_user[user].add(request_id)
        assert all(len(requests) <= 1 for requests in per_user.values()), f"I2: {dict(per_user)}"

    @invariant()
    def every_success_has_a_trace(self) -> None:
        if not self.told.success:
            return
        failed, issued, _ = self._settled()
        traced = failed | issued | self.told.canceled | self._in_the_tail() | self._on_the_dlq()
        lost = set(self.told.success) - traced
        assert not lost, f"told SUCCESS, and nowhere: {sorted(lost)}"

    @invariant()
    def no_copy_given_back_is_held_again(self) -> None:
        """No reservation in Redis is one the database has given back: a request whose failure is
        recorded (released by the DLQ handler), or a canceled copy its user may take again."""
        if not self.coupon:
            return
        given_back = (
            "SELECT user_id, (source->>'reservedAt')::bigint AS at FROM coupon_issue_failures WHERE coupon_id = :c"
        )
        if self.reissue:
            given_back += (
                " UNION SELECT user_id, (extract(epoch FROM reserved_at) * 1000)::bigint FROM coupon_issues"
                " WHERE coupon_id = :c AND status = 'CANCELED'"
            )
        with self.world.engine.connect() as connection:
            back = {(row.user_id, row.at) for row in connection.execute(text(given_back), {"c": self.coupon})}
        members = self.world.redis.zrange(keys.reserved_key(self.coupon), 1, "+inf", byscore=True, withscores=True)
        held_again = {(int(user), int(at)) for user, at in members} & back
        assert not held_again, f"given back, and held again in Redis: {sorted(held_again)}"

    # -- quiescence ----------------------------------------------------------------------------------

    def teardown(self) -> None:
        try:
            if self.coupon:
                self._quiesce()
                self._i3_and_i4()
                self._events_match_the_database()
        finally:
            self.pipeline.close()
            self._out_of_the_schedules_sight()

    def _out_of_the_schedules_sight(self) -> None:
        """The example's coupon moves to a window long past, so that the next examples' scheduled
        reconciles leave it alone (it stays in the database: nothing is deleted)."""
        if self.coupon:
            with self.world.engine.begin() as connection:
                connection.execute(
                    text(
                        "UPDATE coupons SET issue_starts_at = now() - interval '60 days',"
                        " issue_ends_at = now() - interval '59 days' WHERE id = :c"
                    ),
                    {"c": self.coupon},
                )

    def _quiesce(self) -> None:
        """Drain, commit, and reconcile past the skew: with nothing in flight, every member older than
        now is either a holder by the database or never reached Kafka."""
        self.pipeline.commit()
        self.pipeline.drain()
        reconciler = rebuild_dependencies.wiring().reconciler
        holders = reconciler.read_holders()
        assert not holders.in_flight.of(self.coupon), "drained, yet records are in flight"
        past_the_skew = replace(holders, release_before=holders.now + 1)
        try:
            reconciler.reconcile_coupon(self.coupon, past_the_skew)
        except StateLostError:  # the state was lost: its gate's wait has begun, and passes
            self.the_rebuild_gates_wait_passes()
            reconciler.reconcile_coupon(self.coupon, past_the_skew)

    def _i3_and_i4(self) -> None:
        failed, issued, reserved_at = self._settled()
        for request_id in self.told.success:  # I3: exactly one of an issue or a released, recorded failure
            outcomes = (request_id in issued or request_id in self.told.canceled, request_id in failed)
            assert outcomes.count(True) == 1, f"I3: request {request_id} is issued, failed: {outcomes}"
        store = WholeStore(self.world.redis)
        for request_id in failed:
            user = self._failed_user(request_id)
            at = store.reservation_time(self.coupon, user)
            assert at is None or at != reserved_at.get(request_id), f"I3: failed {request_id} still reserved"
        holders = self._database_holders()
        reserved = {
            int(user) for user in self.world.redis.zrange(keys.reserved_key(self.coupon), 1, "+inf", byscore=True)
        }
        assert reserved == holders, f"I4: Redis reserves {sorted(reserved)}, the database holds {sorted(holders)}"
        total, remaining, held = self._database_counts()
        assert remaining == total - held

    def _events_match_the_database(self) -> None:
        """Relayed to the end, the events topic says what the database says: each of the coupon's
        outbox events once its repeats are dropped (delivery is at least once), in the outbox's
        order, and each user's events (an issue, then at most one use, cancel or expiry; a second
        issue only after a cancel, where the coupon allows it) folding to the row of their copy."""
        assert not relay_app.handler({}, InProcessContext())["skipped"]
        with self.world.engine.connect() as connection:
            outbox = connection.execute(
                text("SELECT event_id, published_at FROM outbox WHERE coupon_id = :c ORDER BY id"), {"c": self.coupon}
            ).all()
            rows = {
                row.user_id: (str(row.request_id), row.status)
                for row in connection.execute(
                    text("SELECT user_id, request_id, status FROM coupon_issues WHERE coupon_id = :c"),
                    {"c": self.coupon},
                )
            }
        assert all(row.published_at is not None for row in outbox), "relayed to the end, yet events wait"
        seen: dict[str, dict[str, Any]] = {}
        for record in self.world.events.read():
            if record.key == str(self.coupon).encode():
                event = json.loads(record.value)
                seen.setdefault(event["id"], event)
        assert list(seen) == [str(row.event_id) for row in outbox], "the topic's events are not the outbox's, in order"
        folded: dict[int, tuple[str, str]] = {}  # user -> (request id, status), as the copy's row is per user
        for event in seen.values():
            user, request_id = event["payload"]["userId"], event["payload"]["requestId"]
            before = folded.get(user, (None, None))[1]
            if event["type"] == "COUPON_ISSUED":  # the first issue, or a second take after a cancel
                assert before in (None, "CANCELED" if self.reissue else None), (
                    f"user {user} issued again after {before}"
                )
            else:
                assert folded.get(user) == (request_id, "ISSUED"), f"{event}: after {folded.get(user)}"
            folded[user] = (request_id, STATUS_AFTER[event["type"]])
        assert folded == rows, f"the events fold to {folded}, the database says {rows}"

    # -- what the stores say -------------------------------------------------------------------------

    def _database_counts(self) -> tuple[int, int, int]:
        with self.world.engine.connect() as connection:
            total, remaining = connection.execute(
                text("SELECT total_quantity, remaining_quantity FROM coupons WHERE id = :c"), {"c": self.coupon}
            ).one()
            held = connection.execute(
                text("SELECT count(*) FROM coupon_issues WHERE coupon_id = :c AND status <> 'CANCELED'"),
                {"c": self.coupon},
            ).scalar_one()
        return total, remaining, held

    def _database_holders(self) -> set[int]:
        """Who holds a reservation by the database: every copy not canceled, and the canceled ones
        of a coupon that allows no second take."""
        blocking = "" if self.reissue else " OR status = 'CANCELED'"
        with self.world.engine.connect() as connection:
            rows = connection.execute(
                text(f"SELECT user_id FROM coupon_issues WHERE coupon_id = :c AND (status <> 'CANCELED'{blocking})"),
                {"c": self.coupon},
            )
            return {row.user_id for row in rows}

    def _settled(self) -> tuple[set[str], set[str], dict[str, int]]:
        """Request ids with a recorded failure, request ids issued, and each failure's reservation time."""
        with self.world.engine.connect() as connection:
            failures = connection.execute(
                text("SELECT request_id, source FROM coupon_issue_failures WHERE coupon_id = :c"), {"c": self.coupon}
            ).all()
            issued = connection.scalars(
                text("SELECT request_id FROM coupon_issues WHERE coupon_id = :c"), {"c": self.coupon}
            ).all()
        failed = {str(row.request_id): int(row.source["reservedAt"]) for row in failures}
        return set(failed), {str(r) for r in issued}, failed

    def _issued_now(self) -> set[str]:
        """Request ids of the copies issued and not canceled."""
        with self.world.engine.connect() as connection:
            rows = connection.scalars(
                text("SELECT request_id FROM coupon_issues WHERE coupon_id = :c AND status <> 'CANCELED'"),
                {"c": self.coupon},
            )
            return {str(r) for r in rows}

    def _failed_user(self, request_id: str) -> int:
        with self.world.engine.connect() as connection:
            return int(
                connection.execute(
                    text("SELECT user_id FROM coupon_issue_failures WHERE request_id = :r"), {"r": request_id}
                ).scalar_one()
            )

    def _issued_request(self, user: int) -> str | None:
        with self.world.engine.connect() as connection:
            request_id = connection.execute(
                text("SELECT request_id FROM coupon_issues WHERE coupon_id = :c AND user_id = :u"),
                {"c": self.coupon, "u": user},
            ).scalar_one_or_none()
        return None if request_id is None else str(request_id)

    def _in_the_tail(self) -> set[str]:
        """Request ids of the records after the worker group's committed offsets."""
        return {
            json.loads(record.value)["requestId"]
            for record in self.pipeline.records()
            if record.offset >= self.pipeline.committed.get(record.partition, 0)
        }

    def _on_the_dlq(self) -> set[str]:
        """Request ids named by the dead letters waiting on the DLQ, each made visible again once read."""
        sqs, url = self.pipeline.sqs, self.pipeline.dlq_url
        letters = []
        while messages := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=60).get(
            "Messages", []
        ):
            letters.extend(json.loads(message["Body"]) for message in messages)
            for message in messages:
                sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0)
            if len(messages) < 10:
                break
        named = {letter["requestId"] for letter in letters if "requestId" in letter}
        ranges = [
            (int(where.rsplit("-", 1)[1]), int(span["firstRecordOffset"]), int(span["lastRecordOffset"]))
            for letter in letters
            if "KafkaBatchInfo" in letter
            for where, span in letter["KafkaBatchInfo"]["recordsInfo"].items()
        ]
        if ranges:
            named |= {
                json.loads(record.value)["requestId"]
                for record in self.pipeline.records()
                if any(p == record.partition and first <= record.offset <= last for p, first, last in ranges)
            }
        return named
