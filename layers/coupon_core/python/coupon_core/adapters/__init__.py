"""Adapters: the domain's ports on real servers (the Redis ones are the ``lua_redis`` layer).

    kafka/       connection settings and MSK IAM tokens, the issue publisher, the read-back of offset ranges
    postgres/    engine, tables, migrations, the coupon catalog and the ledgers
    sqs_dlq.py   sending rejection letters to the DLQ

Each maps its driver's errors to ``coupon_core.errors`` with ``lua_redis.Reraise``.
"""
