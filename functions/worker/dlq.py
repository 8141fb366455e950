"""DLQ handler: for each dead letter, releases the reservation and records the failure.

SQS batch with partial batch response (Powertools). A message that cannot be read or handled
raises, is listed in ``batchItemFailures``, and SQS redelivers it until its redrive policy moves
it to the DLQ's own redrive queue: nothing is dropped silently.
"""

from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from coupon_core.observability import logger, metric_name, metrics
from coupon_core.tracing import tracer
from functions.worker.dlq_dependencies import failure_recorder

processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)


def record_handler(record: SQSRecord) -> None:
    try:
        outcomes = failure_recorder().handle(record.body)
    except Exception:
        logger.exception("dead letter not handled; SQS will redeliver it", extra={"messageId": record.message_id})
        metrics.add_metric(name="DeadLetterUnhandled", unit=MetricUnit.Count, value=1)
        raise
    for outcome in outcomes:
        metrics.add_metric(name=metric_name("Failure", outcome), unit=MetricUnit.Count, value=1)


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    return process_partial_response(event=event, record_handler=record_handler, processor=processor, context=context)
