"""Reading a range of records back from Kafka by offset, for the mapping's on-failure records."""

from __future__ import annotations

import time

from kafka import KafkaConsumer, TopicPartition
from kafka.errors import KafkaError

from coupon_core.adapters.kafka.connection import connection_config
from coupon_core.backend_errors import ReadBackError
from coupon_core.domain.dead_letters import OffsetRange
from coupon_core.domain.delivery import Delivered, Position
from coupon_core.errors import Reraise
from coupon_core.settings import KafkaSettings


class KafkaRangeReader:
    """Reads ``[first, last]`` of one partition, without a consumer group, bounded in count and time."""

    def __init__(self, settings: KafkaSettings, *, max_records: int, timeout_s: float) -> None:
        self._settings = settings
        self._max_records = max_records
        self._timeout_s = timeout_s

    def read(self, offsets: OffsetRange) -> list[Delivered]:
        count = offsets.last - offsets.first + 1
        if count > self._max_records:
            raise ReadBackError(f"range {offsets} holds {count} records, more than {self._max_records}")
        with Reraise(ReadBackError, f"could not read {offsets} back", (KafkaError,)):
            return self._read(offsets)

    def _read(self, offsets: OffsetRange) -> list[Delivered]:
        partition = TopicPartition(offsets.topic, offsets.partition)
        consumer = KafkaConsumer(
            **connection_config(self._settings, int(self._timeout_s * 1000)),
            enable_auto_commit=False,
            auto_offset_reset="none",  # a range already deleted by retention is an error, not a silent skip
        )
        try:
            consumer.assign([partition])
            consumer.seek(partition, offsets.first)
            found: list[Delivered] = []
            deadline = time.monotonic() + self._timeout_s
            while consumer.position(partition) <= offsets.last:
                if time.monotonic() > deadline:
                    raise ReadBackError(f"read only {len(found)} records of {offsets} in {self._timeout_s} s")
                for record in consumer.poll(timeout_ms=200).get(partition, []):
                    if offsets.first <= record.offset <= offsets.last:
                        found.append(
                            Delivered.from_bytes(
                                Position(offsets.topic, offsets.partition, record.offset), record.value
                            )
                        )
            return found
        finally:
            consumer.close()
