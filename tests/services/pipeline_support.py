"""The whole pipeline in-process: intake -> Kafka -> worker -> SQS DLQ -> DLQ handler, as AWS runs it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from kafka.consumer.fetcher import ConsumerRecord

from functions.rebuild import app as rebuild_app
from functions.rebuild import build as builder_app
from functions.worker import app as worker_app
from functions.worker import dlq as dlq_app
from local.testkit.kafka_topics import TopicLog, commit_offsets
from local.testkit.lambda_events import InProcessContext, msk_event, on_failure_letter, sqs_event


@dataclass
class Pipeline:
    bootstrap_servers: str
    topic: str
    sqs: Any
    dlq_url: str
    group: str
    log: TopicLog | None = None  # the topic's records, read as they come
    next_offset: dict[int, int] = field(default_factory=dict)  # where the mapping goes on from
    committed: dict[int, int] = field(default_factory=dict)  # the worker group's committed offsets

    def records(self) -> list[ConsumerRecord]:
        """Every record on the topic now."""
        if self.log is None:
            self.log = TopicLog(self.bootstrap_servers, self.topic)
        return self.log.read()

    def close(self) -> None:
        if self.log is not None:
            self.log.close()
            self.log = None

    def pending(self, limit: int | None = None) -> list[ConsumerRecord]:
        """The records the mapping has not handed on yet (at most ``limit``), in Kafka order."""
        pending = [record for record in self.records() if record.offset >= self.next_offset.get(record.partition, 0)]
        pending.sort(key=lambda record: (record.partition, record.offset))
        return pending[:limit] if limit is not None else pending

    def run_worker(self, limit: int | None = None, *, commit: bool = True) -> int:
        """Hand the records not yet processed (at most ``limit``) to the worker, in one batch, and
        commit the worker group's offsets past them once it succeeded (with ``commit=False``,
        at the next :meth:`commit`: a crash before it makes :meth:`replay` send them again)."""
        pending = self.pending(limit)
        if not pending:
            return 0
        event = msk_event([(self.topic, r.partition, r.offset, r.value) for r in pending])
        response = worker_app.handler(event, InProcessContext())
        assert response == {"batchItemFailures": []}, response
        self._move_past(pending)
        if commit:
            self.commit()
        return len(pending)

    def exhaust_retries(self, limit: int | None = None, *, commit: bool = True) -> int:
        """The mapping gives up on the records not yet processed (at most ``limit``): their
        on-failure letter goes to the DLQ and the mapping moves past them; the group's offsets
        follow at once, or, with ``commit=False``, only at the next :meth:`commit` (the mapping
        commits on its own schedule)."""
        pending = self.pending(limit)
        if not pending:
            return 0
        where = [(self.topic, r.partition, r.offset) for r in pending]
        letter = on_failure_letter(where, attempts=4, bootstrap_servers=self.bootstrap_servers)
        self.sqs.send_message(QueueUrl=self.dlq_url, MessageBody=json.dumps(letter))
        self._move_past(pending)
        if commit:
            self.commit()
        return len(pending)

    def commit(self) -> None:
        """Commit the worker group's offsets past every record the mapping has moved past."""
        if self.next_offset != self.committed:
            commit_offsets(self.bootstrap_servers, self.topic, self.group, self.next_offset)
            self.committed = dict(self.next_offset)

    def replay(self) -> None:
        """The mapping restarts (a poller replaced, a crash before its commit): it goes on from
        the committed offsets, and the records after them are delivered again."""
        self.next_offset = dict(self.committed)

    def _move_past(self, records: list[ConsumerRecord]) -> None:
        for record in records:
            self.next_offset[record.partition] = max(self.next_offset.get(record.partition, 0), record.offset + 1)

    def run_dlq_handler(self) -> int:
        """Hand every message on the DLQ to the DLQ handler; return how many there were."""
        handled = 0
        while messages := self.sqs.receive_message(QueueUrl=self.dlq_url, MaxNumberOfMessages=10).get("Messages", []):
            response = dlq_app.handler(sqs_event([m["Body"] for m in messages]), InProcessContext())
            assert response == {"batchItemFailures": []}, response
            for message in messages:
                self.sqs.delete_message(QueueUrl=self.dlq_url, ReceiptHandle=message["ReceiptHandle"])
            handled += len(messages)
        return handled

    def drain(self) -> None:
        """Until nothing is left in Kafka or in the DLQ."""
        while self.run_worker() or self.run_dlq_handler():
            pass


SCHEDULE_EVENT = {"source": "aws.events", "detail-type": "Scheduled Event", "detail": {}}  # EventBridge's


def rebuild(event: Any) -> dict[str, Any]:
    return rebuild_app.handler(event, InProcessContext())


def build(coupon_id: int) -> str:
    """The builder's answer to the intake's ask for the coupon's missing state."""
    return str(builder_app.handler({"stateMissing": coupon_id}, InProcessContext())["state"])
