"""The DLQ on SQS: the worker's rejections sent as rejection letters, ten to a batch."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

import boto3
from botocore.exceptions import BotoCoreError, ClientError

from coupon_core.domain.dead_letters import Rejection
from coupon_core.domain.delivery import Position

logger = logging.getLogger(__name__)

SQS_BATCH_LIMIT = 10


class SqsDeadLetterQueue:
    def __init__(self, queue_url: str, sqs: Any = None) -> None:
        self._queue_url = queue_url
        self._sqs = sqs or boto3.client("sqs")

    def send(self, rejections: Sequence[Rejection]) -> set[Position]:
        """Send one message per rejection; return the positions whose message was not accepted."""
        unsent: set[Position] = set()
        for start in range(0, len(rejections), SQS_BATCH_LIMIT):
            chunk = rejections[start : start + SQS_BATCH_LIMIT]
            entries = [{"Id": str(i), "MessageBody": json.dumps(r.envelope())} for i, r in enumerate(chunk)]
            try:
                answer = self._sqs.send_message_batch(QueueUrl=self._queue_url, Entries=entries)
            except (BotoCoreError, ClientError):
                logger.exception("could not send dead letters", extra={"count": len(chunk)})
                unsent.update(r.delivered.position for r in chunk)
                continue
            for failed in answer.get("Failed", []):
                logger.error("SQS refused a dead letter", extra={"failure": failed})
                unsent.add(chunk[int(failed["Id"])].delivered.position)
        return unsent
