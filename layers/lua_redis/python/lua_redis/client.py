"""Creating a Redis client suited to the reservation path."""

from __future__ import annotations

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry


def connect(url: str, *, socket_timeout: float = 2.0) -> redis.Redis:
    """A client for ``url`` (``redis://``, or ``rediss://`` for TLS) that fails fast.

    A broken connection (typically one that went stale while a Lambda container was frozen) is
    retried once on a new connection, right away. A timeout is never retried: the command may
    have run, and a reserve run twice would answer DUPLICATE for the caller's own reservation.
    """
    return redis.Redis.from_url(
        url,
        decode_responses=True,
        socket_timeout=socket_timeout,
        socket_connect_timeout=socket_timeout,
        retry=Retry(NoBackoff(), 1, supported_errors=(redis.ConnectionError,)),
    )
