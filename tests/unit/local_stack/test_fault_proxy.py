"""The fault proxy's connection accounting and its connection-rate quota, over loopback TCP to
an echo server of the test's own (the proxy is what the first-seconds benchmark and the
connection-count test stand on)."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from local.testkit.fault_proxy import FaultProxy
from tests.clock import Clock


@pytest.fixture
def echo_port() -> Iterator[int]:
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    stopping = threading.Event()

    def serve() -> None:
        while not stopping.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            threading.Thread(target=_echo, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stopping.set()
    thread.join()
    server.close()


def _echo(conn: socket.socket) -> None:
    with conn, contextlib.suppress(OSError):
        while data := conn.recv(1024):
            conn.sendall(data)


def _echoed(port: int) -> bool:
    """Whether a connection through the proxy gets its bytes back (False: closed on it)."""
    with socket.create_connection(("127.0.0.1", port), timeout=2) as conn:
        try:
            conn.sendall(b"ping")
            return conn.recv(4) == b"ping"
        except OSError:
            return False


def test_beyond_the_rate_new_connections_are_closed_and_counted_and_the_rate_refills(echo_port):
    clock = Clock()
    with FaultProxy("127.0.0.1", echo_port, clock=clock) as proxy:
        proxy.limit_new_connections(3)
        answered = [_echoed(proxy.port) for _ in range(8)]
        assert answered.count(True) == 3  # a second's worth at once, then nothing
        assert (proxy.connections, proxy.refused) == (3, 5)
        clock.now += 0.5  # half a second refills one and a half
        assert [_echoed(proxy.port) for _ in range(2)] == [True, False]
        proxy.limit_new_connections(0)
        assert all(_echoed(proxy.port) for _ in range(5))


def test_by_default_the_rate_refills_as_time_passes(echo_port):
    with FaultProxy("127.0.0.1", echo_port) as proxy:
        proxy.limit_new_connections(2)
        assert not all(_echoed(proxy.port) for _ in range(20))  # the bucket's two, then a refusal
        deadline = time.monotonic() + 10
        while not _echoed(proxy.port):
            assert time.monotonic() < deadline, "no connection taken again in 10 s at 2 a second"
            time.sleep(0.05)


def test_it_counts_the_connections_open_at_once(echo_port):
    with FaultProxy("127.0.0.1", echo_port) as proxy:
        held = [socket.create_connection(("127.0.0.1", proxy.port), timeout=2) for _ in range(3)]
        for conn in held:
            conn.sendall(b"x")
            assert conn.recv(1) == b"x"
        for conn in held:
            conn.close()
        deadline = time.monotonic() + 10
        while proxy.open_now:  # the proxy sees them closed within its poll
            assert time.monotonic() < deadline, "the proxy still counts closed connections open"
            time.sleep(0.01)
        assert _echoed(proxy.port)
        assert (proxy.connections, proxy.peak_open) == (4, 3)


def test_a_fault_disarmed_before_it_is_met_touches_nothing(echo_port):
    with FaultProxy("127.0.0.1", echo_port) as proxy:
        proxy.lose_reply_to(b"ping")
        proxy.disarm()
        assert _echoed(proxy.port)
        assert proxy.replies_lost == 0
