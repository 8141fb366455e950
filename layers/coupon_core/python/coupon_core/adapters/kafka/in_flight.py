"""The unconsumed tail of the topic: every record after the worker group's committed offsets."""

from __future__ import annotations

import time

from kafka import KafkaConsumer, TopicPartition
from kafka.errors import KafkaError

from coupon_core.adapters.kafka.connection import connection_config
from coupon_core.backend_errors import ReadBackError
from coupon_core.domain.delivery import Delivered, Position
from coupon_core.domain.in_flight import InFlight
from coupon_core.errors import Reraise
from coupon_core.settings import KafkaSettings


class KafkaInFlightReader:
    """Reads the records the worker group has not committed yet, bounded in count and time.

    No group membership: the committed offsets are fetched (OffsetFetch), never changed, so
    reading never disturbs the worker's consumer group.
    """

    def __init__(self, settings: KafkaSettings, *, group: str, max_records: int, timeout_s: float) -> None:
        self._settings = settings
        self._group = group
        self._max_records = max_records
        self._timeout_s = timeout_s

    def read(self) -> InFlight:
        with Reraise(ReadBackError, "could not read the records in flight", (KafkaError, OSError)):
            return InFlight.of_records(self._read())

    def _read(self) -> list[Delivered]:
        consumer = KafkaConsumer(
            **connection_config(self._settings, int(self._timeout_s * 1000)),
            group_id=self._group,
            enable_auto_commit=False,
        )
        try:
            partitions = consumer.partitions_for_topic(self._settings.topic)
            if not partitions:
                raise ReadBackError(f"topic {self._settings.topic} has no partitions")
            tps = [TopicPartition(self._settings.topic, p) for p in sorted(partitions)]
            committed = {tp: consumer.committed(tp) for tp in tps}  # first: see InFlightReader
            ends = consumer.end_offsets(tps)
            starts = consumer.beginning_offsets(tps)
            ranges = {tp: (max(committed[tp] or 0, starts[tp]), ends[tp]) for tp in tps}
            pending = {tp: span for tp, span in ranges.items() if span[0] < span[1]}
            count = sum(last - first for first, last in pending.values())
            if count > self._max_records:
                raise ReadBackError(f"{count} records in flight, more than {self._max_records}")
            return self._fetch(consumer, pending)
        finally:
            consumer.close()

    def _fetch(self, consumer: KafkaConsumer, pending: dict[TopicPartition, tuple[int, int]]) -> list[Delivered]:
        if not pending:
            return []
        consumer.assign(list(pending))
        for tp, (first, _) in pending.items():
            consumer.seek(tp, first)
        found: list[Delivered] = []
        deadline = time.monotonic() + self._timeout_s
        while any(consumer.position(tp) < last for tp, (_, last) in pending.items()):
            if time.monotonic() > deadline:
                raise ReadBackError(f"read only {len(found)} records in flight in {self._timeout_s} s")
            for tp, records in consumer.poll(timeout_ms=200).items():
                last = pending[tp][1]
                found += [
                    Delivered.from_bytes(Position(tp.topic, tp.partition, r.offset), r.value)
                    for r in records
                    if r.offset < last
                ]
        return found
