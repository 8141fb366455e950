"""The coupon functions' shared code: the domain, its adapters, settings, errors and observability.

    domain/             the business rules and their ports (no drivers)
    adapters/           the ports on PostgreSQL, Kafka, SQS and Lambda (Redis is the lua_redis layer)
    settings/           every environment variable, read once and validated (one module per function)
    errors.py           every exception, in one hierarchy, and the one mapping of a driver's errors
    backend_errors.py   the exceptions only the functions behind the intake raise (errors.py's tree)
    observability.py    the one Logger and Metrics
    tracing.py          the X-Ray tracer, for the functions whose cold start can afford it
    untrusted_json.py   JSON from outside, parsed without crashing

Kept free of Lambda types so that it runs, and is tested, outside Lambda. Only
``adapters.postgres`` imports SQLAlchemy, and the intake imports it on first use, never at cold
start.
"""
