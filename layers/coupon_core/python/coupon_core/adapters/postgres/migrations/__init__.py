"""Alembic migrations: ``env.py`` runs them on the connection ``migrate.py`` hands over;
``versions/`` holds one revision a file."""
