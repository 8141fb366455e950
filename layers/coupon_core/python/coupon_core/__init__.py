"""Shared code of the coupon functions: settings, domain, database, Kafka codec and producer.

Kept free of Lambda types so that it runs, and is tested, outside Lambda. Modules that pull in
SQLAlchemy live under ``coupon_core.db`` and are imported only where the database is used, to
keep them off the intake hot path's cold start.
"""
