"""The Kafka-to-Lambda bridge: the MSK event source mapping, for LocalStack.

A consumer group on the topic hands batches to the deployed worker through the Lambda API, in
the MSK event format (base64 keys and values, records grouped by topic-partition), the way the
AWS mapping does: it honours the partial batch response (the batch is retried from the lowest
failed offset of each partition), retries at most ``--max-retries`` times, and then sends the
mapping's on-failure record (offset ranges only, no payload) to the DLQ and moves on.

    python -m local.stack.bridge --bootstrap HOST:PORT --topic T --function NAME --dlq-url URL
"""

from __future__ import annotations

import argparse
import json
import logging
import signal
import time
from pathlib import Path

import boto3
from botocore.exceptions import BotoCoreError, ClientError
from kafka import KafkaConsumer, OffsetAndMetadata, TopicPartition
from kafka.consumer.fetcher import ConsumerRecord
from kafka.errors import KafkaError

from local.testkit.kafka_topics import client_options
from local.testkit.lambda_events import msk_event, on_failure_letter

LOG = logging.getLogger("bridge")


class Bridge:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.lambda_ = boto3.client("lambda")
        self.sqs = boto3.client("sqs")
        self.consumer = KafkaConsumer(
            args.topic,
            **client_options(args.bootstrap),
            group_id=args.group,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            max_poll_records=args.batch_size,
            # Tansu holds a join for about half the session timeout: 10 s joins in ~5 s and leaves
            # room for a busy machine's late heartbeats.
            session_timeout_ms=10_000,
            heartbeat_interval_ms=1_000,
        )
        self.running = True

    def run(self) -> None:
        while self.running:
            try:
                polled = self.consumer.poll(timeout_ms=self.args.window_ms, max_records=self.args.batch_size)
                self._say_ready()
                records = (r for batch in polled.values() for r in batch)
                batch = sorted(records, key=lambda r: (r.partition, r.offset))
                if batch:
                    self.deliver_or_rewind(batch)
            except KafkaError:
                # Dropped from the group (a slow batch, a busy machine) or the broker went away: the
                # uncommitted batch comes again after the rejoin, as the mapping redelivers. The
                # worker is idempotent, so a record handled twice is ALREADY_ISSUED the second time.
                LOG.warning("Kafka error; rejoining and going on", exc_info=True)
                time.sleep(1)

    def deliver_or_rewind(self, batch: list[ConsumerRecord]) -> None:
        """Deliver; if the Lambda API itself fails, rewind so that the same batch comes again."""
        try:
            self.deliver(batch)
        except (BotoCoreError, ClientError):
            LOG.warning("could not invoke the worker; the batch will be delivered again", exc_info=True)
            for partition in {r.partition for r in batch}:
                first = min(r.offset for r in batch if r.partition == partition)
                self.consumer.seek(TopicPartition(self.args.topic, partition), first)
            time.sleep(1)

    def deliver(self, batch: list[ConsumerRecord]) -> None:
        """Invoke the worker until the batch succeeds or its retries run out; then commit past it."""
        pending = batch
        for attempt in range(self.args.max_retries + 1):
            failed = self.invoke(pending, attempt)
            if not failed:
                break
            # As the mapping does: retry each partition from its lowest failed offset.
            lowest: dict[int, int] = {}
            for partition, offset in failed:
                lowest[partition] = min(offset, lowest.get(partition, offset))
            pending = [r for r in pending if r.partition in lowest and r.offset >= lowest[r.partition]]
            time.sleep(self.args.backoff_s * 2**attempt)
        else:
            self.on_failure(pending, attempt + 1)
        self.consumer.commit(
            {
                TopicPartition(self.args.topic, partition): OffsetAndMetadata(
                    max(r.offset for r in batch if r.partition == partition) + 1, None, -1
                )
                for partition in {r.partition for r in batch}
            }
        )

    def invoke(self, records: list[ConsumerRecord], attempt: int) -> list[tuple[int, int]]:
        """The (partition, offset) pairs the worker reported failed; all of them if it raised."""
        event = msk_event([(r.topic, r.partition, r.offset, r.value, r.key) for r in records])
        answer = self.lambda_.invoke(FunctionName=self.args.function, Payload=json.dumps(event).encode())
        body = answer["Payload"].read()
        if answer.get("FunctionError"):
            LOG.warning("worker failed (attempt %d): %s", attempt + 1, body[:500])
            return [(r.partition, r.offset) for r in records]
        failures = json.loads(body or b"{}").get("batchItemFailures", [])
        if failures:
            LOG.info("worker reported %d failed records (attempt %d)", len(failures), attempt + 1)
        return [
            (int(f["itemIdentifier"]["partition"].rsplit("-", 1)[1]), int(f["itemIdentifier"]["offset"]))
            for f in failures
        ]

    def on_failure(self, records: list[ConsumerRecord], attempts: int) -> None:
        """The mapping's on-failure record for SQS: offsets only, no payload."""
        where = [(r.topic, r.partition, r.offset) for r in records]
        document = on_failure_letter(where, attempts=attempts, bootstrap_servers=self.args.bootstrap)
        self.sqs.send_message(QueueUrl=self.args.dlq_url, MessageBody=json.dumps(document))
        LOG.warning("retries exhausted: on-failure record sent for %s", list(document["KafkaBatchInfo"]["recordsInfo"]))

    def _say_ready(self) -> None:
        """Once the group has given this consumer its partitions, and it knows where to start,
        say so in ``--ready-file``: the stack is up only then, as the MSK mapping exists before
        any request is sent. Joining later, it would start a partition where Tansu says the
        partition begins, which was once past its first record (docs/architecture.md, Fidelity)."""
        ready = self.args.ready_file
        assigned = self.consumer.assignment()
        if ready is None or ready.exists() or not assigned:
            return
        for partition in assigned:
            self.consumer.position(partition)
        ready.write_text("joined\n")

    def stop(self, *_: object) -> None:
        self.running = False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--function", required=True)
    parser.add_argument("--dlq-url", required=True)
    parser.add_argument("--group", default="coupon-worker-local")
    parser.add_argument("--batch-size", type=int, default=100)
    parser.add_argument("--window-ms", type=int, default=200)
    parser.add_argument("--max-retries", type=int, default=3)
    parser.add_argument("--backoff-s", type=float, default=1.0, help="first retry delay, doubled each time")
    parser.add_argument("--ready-file", type=Path, help="written once the group has assigned the partitions")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    bridge = Bridge(args)
    signal.signal(signal.SIGTERM, bridge.stop)
    signal.signal(signal.SIGINT, bridge.stop)
    LOG.info("bridging %s to %s", args.topic, args.function)
    bridge.run()
    bridge.consumer.close()


if __name__ == "__main__":
    main()
