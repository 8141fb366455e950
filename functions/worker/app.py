"""Worker function: persists MSK batches of accepted requests (docs/design.md, Flow).

Thin: read the MSK event once, with Powertools' Kafka event type, let the domain persist the
whole batch grouped by coupon, then hand each record's verdict to Powertools' batch processor,
which answers the partial batch response (``batchItemFailures`` with topic-partition and offset)
for the TRANSIENT ones. The processor is used as a context manager over the records already read,
since the domain persists a coupon's records together, not one record at a time. Kept by hand:
the event's shape is checked first, so that an event that is not an MSK batch is refused with a
message that says so (Powertools' data class would fail on it with a bare ``KeyError``).
"""

from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.kafka_event import KafkaEvent, KafkaEventRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from coupon_core.domain.delivery import Delivered, Position
from coupon_core.domain.persisting import RecordOutcome, Verdict
from coupon_core.observability import logger, metric_name, metrics
from coupon_core.tracing import tracer
from functions.worker.dependencies import persister

processor = BatchProcessor(event_type=EventType.Kafka, raise_on_entire_batch_failure=False)


class MalformedEventError(ValueError):
    """The event is not an MSK event."""


class TransientRecordError(Exception):
    """Raised for a TRANSIENT record so that the batch processor lists it as failed."""


def _read(event: dict[str, Any]) -> list[tuple[KafkaEventRecord, Delivered]]:
    """Each record of the MSK event, with what it delivers (its position, and its issue record or
    the problem that left it none)."""
    batches = event.get("records")
    if not isinstance(batches, dict) or not all(isinstance(batch, list) for batch in batches.values()):
        raise MalformedEventError("an MSK event has 'records': an object of topic-partition -> list of records")
    read = []
    for record in KafkaEvent(event).records:
        try:
            position = Position(str(record.topic), int(record.partition), int(record.offset))
        except (KeyError, TypeError, ValueError) as exc:
            raise MalformedEventError(f"a record lacks topic, partition or offset: {exc!r}") from None
        read.append((record, Delivered.decode(position, record.get("value"))))
    return read


def _log(delivered: Delivered, verdict: Verdict) -> None:
    record = delivered.record
    context = {
        "outcome": verdict.outcome.value,
        "reason": verdict.reason,
        "partition": f"{delivered.position.topic}-{delivered.position.partition}",
        "offset": delivered.position.offset,
        "couponId": record.coupon_id if record else None,
        "userId": record.user_id if record else None,
        "requestId": str(record.request_id) if record else None,
    }
    if verdict.outcome in (RecordOutcome.ISSUED, RecordOutcome.ALREADY_ISSUED):
        logger.debug("record persisted", extra=context)
    else:
        logger.warning("record not persisted", extra=context)


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    read = _read(event)
    verdicts = persister().persist([delivered for _, delivered in read])
    for _, delivered in read:
        verdict = verdicts[delivered.position]
        _log(delivered, verdict)
        metrics.add_metric(name=metric_name("Record", verdict.outcome), unit=MetricUnit.Count, value=1)

    def record_handler(record: KafkaEventRecord) -> None:
        verdict = verdicts[Position(record.topic, int(record.partition), int(record.offset))]
        if verdict.outcome is RecordOutcome.TRANSIENT:
            raise TransientRecordError(verdict.reason)

    with processor(records=[record.raw_event for record, _ in read], handler=record_handler, lambda_context=context):
        processor.process()
    return processor.response()
