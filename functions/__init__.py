"""The Lambda functions, each a thin handler over the shared layers (one folder a function).

intake/              POST /coupon-issues behind API Gateway: reserve and publish, nothing else
coupons/             every other route of the HTTP API (status, use, cancel, the operators'), on stock Powertools
http_api/            what the two HTTP functions share: the answers and their refusals, the caller, the bodies
worker/              MSK batches to PostgreSQL (app.py), and the DLQ handler (dlq.py)
rebuild/             the scheduled (and on-demand) reconcile of Redis with the database, and a missing state built
relay/               the scheduled expiry and the outbox published to coupon.events.v1
migrate/             the schema upgraded at deploy time
topic/               the custom resource that makes the Kafka topics
schedule_events.py   the EventBridge schedule's event, as rebuild and relay recognise it
"""
