"""The coupon functions' shared code: the domain, its adapters, settings, errors and observability.

    domain/      issuing, persisting, failures, reconcile, status, and their ports (no drivers)
    adapters/    the ports on PostgreSQL, Kafka and SQS (Redis is the ``lua_redis`` layer)
    settings/    every environment variable, read once and validated (one module per function)
    errors.py    every exception of this layer, in one hierarchy

Kept free of Lambda types so that it runs, and is tested, outside Lambda. Only
``adapters.postgres`` imports SQLAlchemy, and the intake imports it on first use, never at cold
start.
"""
