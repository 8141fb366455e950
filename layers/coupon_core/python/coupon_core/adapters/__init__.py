"""Adapters: the domain's ports on real servers (the Redis ones are the ``lua_redis`` layer).

    kafka/              the issue publisher, the event publisher, the read-back of records, topics, MSK IAM
    postgres/           engine, tables, migrations, the catalog, the ledgers, the lifecycle and the outbox
    sqs_dlq.py          sending rejection letters to the DLQ
    lambda_rebuild.py   a function of the rebuild code invoked synchronously: the builder of a missing state
    lambda_reconcile.py the rebuild function invoked for one coupon (the operators' reconcile)
    aws_credentials.py  the execution role's credentials, found once, for the tokens signed here

Each maps its driver's errors to ``coupon_core.errors`` with ``coupon_core.errors.Reraise``.
"""
