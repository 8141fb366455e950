"""The hot path's cold start: importing the handler pulls in no SQLAlchemy, Alembic or X-Ray SDK."""

from __future__ import annotations

import os
import subprocess
import sys


def test_importing_the_intake_handler_leaves_the_database_stack_and_the_xray_sdk_unloaded():
    probe = (
        "import sys, functions.intake.app; "
        "print(sorted(m for m in ('sqlalchemy', 'alembic', 'pg8000', 'aws_xray_sdk') if m in sys.modules))"
    )
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, env=environment
    ).stdout.strip()
    assert loaded == "[]"
