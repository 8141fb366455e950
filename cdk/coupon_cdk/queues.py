"""The SQS dead letter queue and its own redrive queue; on AWS, the queue of failed scheduled runs."""

from __future__ import annotations

from typing import Any

from aws_cdk import Duration
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from coupon_cdk.nag import accept

MAX_RECEIVES = 5


class DeadLetterQueues(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, handler_timeout_s: int) -> None:
        super().__init__(scope, construct_id)
        self.redrive = self._queue("Redrive")
        self.dlq = self._queue(
            "Dlq",
            visibility_timeout=Duration.seconds(6 * handler_timeout_s),  # AWS's advice for a Lambda source
            dead_letter_queue=sqs.DeadLetterQueue(queue=self.redrive, max_receive_count=MAX_RECEIVES),
        )

    def add_failed_runs(self) -> sqs.Queue:
        """The on-failure destination of the asynchronously invoked functions (the scheduled
        rebuild and relay): each failed run leaves its event and error here, not only an Errors
        metric, and an alarm says so (docs/operations.md)."""
        self.failed_runs = self._queue("FailedRuns")
        accept(self.failed_runs, "AwsSolutions-SQS3")
        return self.failed_runs

    def _queue(self, name: str, **options: Any) -> sqs.Queue:
        """Encrypted (SSE-SQS), SSL only, messages kept 14 days."""
        return sqs.Queue(
            self,
            name,
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            retention_period=Duration.days(14),
            **options,
        )
