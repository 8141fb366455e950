"""The Lambda functions, each a thin handler over the shared layers (one folder a function).

intake/              the HTTP API behind API Gateway: reserve and publish, and the operators' routes
worker/              MSK batches to PostgreSQL (app.py), and the DLQ handler (dlq.py)
rebuild/             the scheduled (and on-demand) reconcile of Redis with the database
relay/               the scheduled expiry and the outbox published to coupon.events.v1
migrate/             the schema upgraded at deploy time
topic/               the custom resource that makes the Kafka topics
schedule_events.py   the EventBridge schedule's event, as rebuild and relay recognise it
"""
