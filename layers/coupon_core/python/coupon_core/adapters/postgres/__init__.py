"""PostgreSQL: engine, tables, migrations, the coupon catalog and the ledgers (SQLAlchemy 2, pg8000).

Imported only where the database is used: SQLAlchemy stays off the intake hot path.
"""
