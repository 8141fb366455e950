"""The domain is free of drivers and of Lambda: importing every module of ``coupon_core.domain``
loads none of them (in a fresh interpreter, so that nothing another test imported counts)."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOMAIN = ROOT / "layers" / "coupon_core" / "python" / "coupon_core" / "domain"
DRIVERS = ("redis", "kafka", "sqlalchemy", "pg8000", "boto3", "botocore", "aws_lambda_powertools")

_IMPORT_EVERY_MODULE = """
import importlib, json, pkgutil, sys
import coupon_core.domain as domain
for module in pkgutil.iter_modules(domain.__path__):
    importlib.import_module(f"coupon_core.domain.{module.name}")
print(json.dumps(sorted({name.split(".")[0] for name in sys.modules})))
"""


def loaded_by_the_domain() -> set[str]:
    run = subprocess.run(
        [sys.executable, "-c", _IMPORT_EVERY_MODULE],
        capture_output=True,
        text=True,
        check=True,
        env=os.environ | {"PYTHONPATH": os.pathsep.join(sys.path)},  # the layers, as pytest found them
    )
    return set(json.loads(run.stdout))


def test_importing_every_domain_module_loads_no_driver():
    assert len(list(DOMAIN.glob("*.py"))) > 10  # every module, as pkgutil finds them
    loaded = loaded_by_the_domain()
    assert "coupon_core" in loaded
    assert not loaded & set(DRIVERS), f"the domain loads {sorted(loaded & set(DRIVERS))}"


def test_the_domain_and_the_http_models_own_their_values_and_import_no_adapter():
    """The Redis adapter implements the domain's ports, never the other way."""
    assert "lua_redis" not in loaded_by_the_domain()
    for folder in (DOMAIN, ROOT / "functions" / "http_api"):
        for path in folder.glob("*.py"):
            imported = {
                (node.module or "") if isinstance(node, ast.ImportFrom) else alias.name
                for node in ast.walk(ast.parse(path.read_text()))
                if isinstance(node, ast.Import | ast.ImportFrom)
                for alias in node.names
            }
            assert not {name for name in imported if name.split(".")[0] == "lua_redis"}, path
