"""A TCP proxy that injects faults between a client and a real server (Valkey, the broker).

``lose_reply_to(marker)`` arms it: the next request that contains ``marker`` reaches the server
and runs there, but its reply never reaches the client, whose connection is dropped instead.
That is a failover or a reset at the worst moment: the client cannot know whether its command
ran. ``delay_reply_to(marker, seconds)`` holds that reply back instead (a slow or partitioned
network), then forwards it. ``times`` arms it for that many requests, ``disarm`` forgets what
is armed and not yet met. Everything else is
forwarded untouched, in both directions. It counts the connections clients open through it
(``connections``) and the most that were open at once (``peak_open``). ``limit_new_connections``
makes it a broker with a connection-rate quota (MSK's 100 new IAM connections per second per
broker), and ``limit_open_connections`` one with a connection quota (MSK's 3,000 IAM connections
at once per broker): a connection beyond either is closed as soon as it is accepted
(``refused``), as MSK rejects it ("Too many connects"), and the client has to try again.

With ``tls`` (the TLS of its two ends: as the server its clients trust, as a client of the
server; the local stack's are ``local.stack.tls.proxy_ends()``) the proxy stands where the
network is in front of a TLS server (the local stores): it answers clients with a certificate they
verify as they would the server's, and reaches the server over TLS, verified in turn; so it sees
the requests it looks for in the clear, and every client still speaks TLS to a certificate it
trusts. A broker of its own behind one: ``local.stack.tansu.proxied_broker``.
"""

from __future__ import annotations

import contextlib
import select
import socket
import ssl
import threading
import time
from collections.abc import Callable
from types import TracebackType

HANDSHAKE_TIMEOUT_S = 5.0
POLL_S = 0.05  # how long a side's read waits for data before it looks again
SEND_TIMEOUT_S = 10.0


TlsEnds = tuple[ssl.SSLContext, ssl.SSLContext]  # as the server its clients trust, as the server's client


class FaultProxy:
    def __init__(
        self,
        target_host: str,
        target_port: int,
        *,
        tls: TlsEnds | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``clock``: the seconds the connection rate's bucket refills by (a test's own clock
        makes the rate exact whatever the machine's pace)."""
        self._target = (target_host, target_port)
        self._tls = tls
        self._clock = clock
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.2)
        self._marker: bytes | None = None
        self._delay_s = 0.0  # 0: lose the reply; else hold it back that long
        self._times = 0
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._threads: list[threading.Thread] = []
        self._sockets: list[socket.socket] = []
        self.replies_lost = 0
        self.replies_delayed = 0
        self.connections = 0
        self.peak_open = 0
        self.refused = 0
        self._open = 0
        self._rate = 0.0  # new connections per second allowed; 0: no limit
        self._most_open = 0  # connections open at once allowed; 0: no limit
        self._tokens = 0.0
        self._refilled = 0.0

    @property
    def port(self) -> int:
        return int(self._listener.getsockname()[1])

    def limit_new_connections(self, per_second: float) -> None:
        """At most ``per_second`` new connections a second (a bucket of one second's worth)."""
        with self._lock:
            self._rate, self._tokens, self._refilled = per_second, per_second, self._clock()

    def limit_open_connections(self, most: int) -> None:
        """At most ``most`` connections open at once (0: no limit)."""
        with self._lock:
            self._most_open = most

    def _admit(self) -> bool:
        with self._lock:
            if self._most_open and self._open >= self._most_open:
                self.refused += 1
                return False
            if not self._rate:
                return True
            now = self._clock()
            self._tokens = min(self._rate, self._tokens + (now - self._refilled) * self._rate)
            self._refilled = now
            if self._tokens < 1:
                self.refused += 1
                return False
            self._tokens -= 1
            return True

    def drop_connections(self) -> None:
        """Closes every connection open through it, both ends (a broker restarting, a network
        cut): clients see them go, and have to connect again."""
        with self._lock:
            sockets, self._sockets = self._sockets, []
        _close(*sockets)

    @property
    def open_now(self) -> int:
        """Connections open through it now (one counts as closed as soon as either end closes it)."""
        with self._lock:
            return self._open

    def count_from_now(self) -> None:
        """Counts connections afresh: none opened yet, the peak what is open now."""
        with self._lock:
            self.connections, self.peak_open = 0, self._open

    def lose_reply_to(self, marker: bytes, *, times: int = 1) -> None:
        self._arm(marker, 0.0, times)

    def delay_reply_to(self, marker: bytes, seconds: float, *, times: int = 1) -> None:
        self._arm(marker, seconds, times)

    def disarm(self) -> None:
        """Forgets a fault armed and not yet met: what comes next is forwarded untouched."""
        self._arm(b"", 0.0, 0)

    def _arm(self, marker: bytes, delay_s: float, times: int) -> None:
        with self._lock:
            self._marker, self._delay_s, self._times = marker, delay_s, times

    def __enter__(self) -> FaultProxy:
        self._spawn(self._accept)
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self._stopping.set()
        for sock in [self._listener, *self._sockets]:
            with contextlib.suppress(OSError):
                sock.close()
        for thread in self._threads:
            thread.join(timeout=5)

    def _spawn(self, target: Callable[..., None], *args: object) -> threading.Thread:
        thread = threading.Thread(target=target, args=args, daemon=True)
        self._threads.append(thread)
        thread.start()
        return thread

    def _accept(self) -> None:
        while not self._stopping.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            if not self._admit():
                _close(client)
                continue
            try:
                client, server = self._connect(client)
            except OSError:  # the server is gone, or a handshake failed: so is this connection
                _close(client)
                continue
            with self._lock:
                self._sockets += [client, server]
                self.connections += 1
                self._open += 1
                self.peak_open = max(self.peak_open, self._open)
            fault: list[float] = []  # what to do to this connection's next reply, once armed
            to_client, to_server = _Side(client), _Side(server)
            closed = threading.Event()  # set by the first direction to stop: the connection is gone
            self._spawn(self._one_way, self._client_to_server, to_client, to_server, fault, closed)
            self._spawn(self._one_way, self._server_to_client, to_server, to_client, fault, closed)

    def _one_way(
        self, pump: Callable[[_Side, _Side, list[float]], None], source: _Side, sink: _Side, fault: list[float],
        closed: threading.Event,
    ) -> None:  # fmt: skip
        """One direction of a connection; the connection counts as closed when the first of its
        two directions stops (as soon as either end closed), not when the other one notices."""
        pump(source, sink, fault)
        with self._lock:
            if not closed.is_set():
                closed.set()
                self._open -= 1

    def _connect(self, client: socket.socket) -> tuple[socket.socket, socket.socket]:
        """The client's socket and one to the server, both over TLS in TLS mode."""
        server = socket.create_connection(self._target, timeout=HANDSHAKE_TIMEOUT_S)
        if self._tls is not None:
            as_server, as_client = self._tls
            try:
                client.settimeout(HANDSHAKE_TIMEOUT_S)
                client = as_server.wrap_socket(client, server_side=True)
                server = as_client.wrap_socket(server, server_hostname=self._target[0])
            except OSError:
                _close(server)
                raise
        return client, server

    def _client_to_server(self, client: _Side, server: _Side, fault: list[float]) -> None:
        with contextlib.suppress(OSError):
            while (chunk := client.read()) != b"":
                if chunk is None:
                    continue
                with self._lock:
                    if self._times > 0 and self._marker is not None and self._marker in chunk:
                        self._times -= 1
                        fault.append(self._delay_s)
                server.write(chunk)
        _close(client.sock, server.sock)

    def _server_to_client(self, server: _Side, client: _Side, fault: list[float]) -> None:
        with contextlib.suppress(OSError):
            while (chunk := server.read()) != b"":
                if chunk is None:
                    continue
                if fault:
                    delay_s = fault.pop()
                    if not delay_s:  # the request ran on the server; its reply is lost with the connection
                        self.replies_lost += 1
                        break
                    self.replies_delayed += 1
                    self._stopping.wait(delay_s)
                client.write(chunk)
        _close(client.sock, server.sock)


class _Side:
    """One end of a proxied connection, read by one thread and written by the other.

    A TLS socket's state (OpenSSL's) must not be used by two threads at once, so every read and
    write holds the side's lock; a read waits for data outside it (``select``, at most
    ``POLL_S``), so that a write gets in meanwhile.
    """

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self._lock = threading.Lock()

    def read(self) -> bytes | None:
        """Data, b"" once the peer has closed, None if nothing came within ``POLL_S``."""
        with self._lock:
            decrypted = self.sock.pending() if isinstance(self.sock, ssl.SSLSocket) else 0
        try:
            if not decrypted and not select.select([self.sock], [], [], POLL_S)[0]:
                return None
        except ValueError:  # the other direction closed this socket meanwhile
            return b""
        with self._lock:
            self.sock.settimeout(POLL_S)
            try:
                return self.sock.recv(65536)
            except TimeoutError:  # bytes of a TLS record, not yet all of it
                return None

    def write(self, chunk: bytes) -> None:
        with self._lock:
            self.sock.settimeout(SEND_TIMEOUT_S)
            self.sock.sendall(chunk)


def _close(*sockets: socket.socket) -> None:
    for sock in sockets:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            sock.close()
