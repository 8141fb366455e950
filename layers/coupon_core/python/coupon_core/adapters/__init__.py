"""Adapters: the domain's ports on real servers (the Redis ones are the ``lua_redis`` layer).

    kafka/              the issue publisher, the event publisher, the read-back of records, topics, MSK IAM
    postgres/           engine, tables, migrations, the catalog, the ledgers, the lifecycle and the outbox
    sqs_dlq.py          sending rejection letters to the DLQ
    lambda_rebuild.py   the rebuild function invoked for one coupon (the operators' reconcile)

Each maps its driver's errors to ``coupon_core.errors`` with ``driver_errors.Reraise``.
"""
