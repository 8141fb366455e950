"""PostgreSQL (SQLAlchemy 2, pg8000).

    engine.py       the engine, from DATABASE_URL or a Secrets Manager secret
    models.py       the tables of docs/design.md
    migrations/     the Alembic migrations that create them
    migrate.py      the schema upgraded to the newest (make migrate)
    catalog.py      the coupon catalog as the functions read it (the CouponCatalog port)
    admin_catalog.py  and as operators change and page it (the AdminCatalog port)
    ledger.py       the worker's and the DLQ handler's ledgers of issues and failures
    lifecycle.py    issued copies used, canceled and expired, each with its outbox event
    outbox.py       the outbox table's rows, as each change writes its event
    outbox_relay.py the relay's side of it: events claimed, published and marked

Imported only where the database is used: SQLAlchemy stays off the intake hot path.
"""
