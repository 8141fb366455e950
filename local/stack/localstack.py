"""LocalStack on the host, without Docker: its own virtual environment, our Lambda executor.

``localstack-core`` 4.13.1 runs with a few pins (pyproject's ``localstack`` dependency group,
locked with everything else in uv.lock) on the same Python 3.12 as the project (its virtual
environment is made from the runtime's bare interpreter, as the functions' processes are); its
Lambda functions run through ``coupon-lambda-executor`` (``local/stack/lambda_executor``) as
host processes on that bare interpreter. State lives in the
scratch folder and is not persisted.
"""

from __future__ import annotations

import os
import shutil
import time
import urllib.request
from collections.abc import Mapping
from pathlib import Path

from coupon_cdk import locked
from local.stack.processes import Process, Service, ServiceError, spawn

PORT = 4566
URL = f"http://127.0.0.1:{PORT}"
EXECUTOR = Path(__file__).resolve().parent / "lambda_executor"
START_TIMEOUT_S = 90


def healthy() -> bool:
    try:
        with urllib.request.urlopen(f"{URL}/_localstack/health", timeout=1) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


def start(scratch: Path, venv: Path, lambda_python: str, reports: Path, trust: Mapping[str, str]) -> Service:
    """Start LocalStack on 127.0.0.1:4566 and wait until it answers its health check.

    The functions run on ``lambda_python``, a bare interpreter of the runtime's version; each of
    their processes writes in ``reports`` where it imported its packages from, and trusts the
    CAs ``trust`` names (``TRUST_VARIABLES``: the system's and the local stack's) as the runtime
    trusts Amazon's.
    """
    if healthy():
        raise ServiceError(f"something already answers on {URL}; stop it first (make down)")
    python = locked.environment("localstack", venv, lambda_python, editable=EXECUTOR)
    folder = scratch / "localstack"
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "tmp").mkdir(parents=True)
    (folder / "fs").mkdir()
    environment = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", str(folder)),
        "OVERRIDE_IN_DOCKER": "0",
        "FILESYSTEM_ROOT": str(folder / "fs"),
        "TMPDIR": str(folder / "tmp"),
        "GATEWAY_LISTEN": f"127.0.0.1:{PORT}",
        "LOCALSTACK_HOST": f"127.0.0.1:{PORT}",
        "SQS_ENDPOINT_STRATEGY": "path",  # queue URLs on 127.0.0.1: no DNS for *.localstack.cloud here
        "PERSISTENCE": "0",
        "DNS_ADDRESS": "0",
        "SKIP_SSL_CERT_DOWNLOAD": "1",
        "DISABLE_EVENTS": "1",
        "LAMBDA_RUNTIME_EXECUTOR": "host",
        # AWS's SQS mapping long-polls and hands a message on as it arrives; LocalStack's backs off
        # up to 10 s (5-15 s randomised) after empty polls: a dead letter would wait that long
        "LAMBDA_EVENT_SOURCE_MAPPING_MAX_BACKOFF_ON_EMPTY_POLL_SEC": "1",
        "LS_LOG": os.environ.get("LS_LOG", "warn"),  # a log line per request costs throughput
        "COUPON_LAMBDA_PYTHON": lambda_python,
        "COUPON_EXECUTOR_REPORTS": str(reports),
        **{f"COUPON_{name}": value for name, value in trust.items()},  # for the functions' processes alone
    }
    log = folder / "localstack.log"
    process = spawn([str(python), "-m", "localstack.runtime.main"], log, env=environment)
    deadline = time.monotonic() + START_TIMEOUT_S
    while not healthy():
        if process.poll() is not None or time.monotonic() > deadline:
            raise ServiceError(f"LocalStack did not start; see {log}")
        time.sleep(0.5)
    return Service("AWS_ENDPOINT_URL", URL, (Process(process.pid),))
