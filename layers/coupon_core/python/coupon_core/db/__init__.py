"""PostgreSQL access: models, engine, migrations and queries (SQLAlchemy 2 with pg8000).

Imported only where the database is used: SQLAlchemy stays off the intake hot path.
"""
