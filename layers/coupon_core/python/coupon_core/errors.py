"""Every exception of the system, in one tree, and the one way a driver's errors become them.

    CouponError
    ├── InvalidInputError            an id or a time is malformed; raised before any store is
    │                                touched (ValueError)
    ├── ConfigError                  a configuration variable is missing or malformed, or ...
    │   ├── SecretContentsError  *   ... the database secret lacks the fields the functions read
    │   ├── NoCredentialsError       ... IAM authentication finds no AWS credentials to sign with
    │   └── TopicShrinkError     *   ... a topic was asked for fewer partitions than it has
    ├── MalformedRecordError     *   a Kafka record's value is not a valid issue record (ValueError)
    ├── UnreadableDeadLetterError *  a DLQ message that is neither a rejection letter nor an
    │                                on-failure letter, or is incomplete (ValueError)
    ├── UnknownCouponsError      *   an on-demand reconcile named coupons that do not exist (ValueError)
    ├── InvalidChangeError       *   an operator's change would break a rule of the coupon (the
    │                                window's order, the maximum stock); nothing changed
    ├── StateLostError           *   a coupon's state was lost mid-sale and may not be rebuilt yet
    ├── StockMismatchError       *   the guarded decrement found less stock than the locked row
    │                                said; the transaction is undone
    └── UnavailableError             a server did not answer as it should; worth retrying later
        ├── DatabaseUnavailableError * PostgreSQL unreachable, or it refused the transaction
        ├── StateUnavailableError    Redis unreachable, too slow, or full (``noeviction``)
        ├── LockUnavailableError *   a coupon lock was still held by another owner when the wait ran out
        ├── PublishError             Kafka did not acknowledge a record
        │   ├── NotPublishedError    ... and it never left the producer: it is not in the log
        │   └── PublishUnconfirmedError  ... after it was sent (and once more): it may be in the log
        └── ReadBackError        *   records could not be read back from Kafka by offset

The classes marked * are in ``coupon_core.backend_errors``: only the functions behind the intake raise
them, and the intake, which imports this module, imports none of them.
Every outage is answered 503 with ``Retry-After``: the intake's service turns each it meets into
UNAVAILABLE (``IssueService.issue``), the coupons function's handler catches ``UnavailableError``.
Adapters turn their driver's errors into these with :class:`Reraise` (a ``with`` block or a
decorator, or its ``causes`` and ``mapped``), the one way errors are
mapped in this project, so that neither the domain nor a handler ever sees a driver's types.
This module imports no driver.
"""

from __future__ import annotations

from contextlib import ContextDecorator
from types import TracebackType


class CouponError(Exception):
    """The root of this layer's exceptions."""


class InvalidInputError(CouponError, ValueError):
    """An id or a time is malformed; raised before any store is touched (invariant I5)."""


class ConfigError(CouponError):
    """The function is configured wrongly: a variable missing or malformed (this class; the text
    names it), or what a variable points at (the subclasses). Nothing works until it is fixed."""


class NoCredentialsError(ConfigError):
    """No AWS credentials where IAM authentication needs them to sign a token."""


class UnavailableError(CouponError):
    """A server did not answer as it should; the same call may succeed later."""


class StateUnavailableError(UnavailableError):
    """Redis could not be reached, did not answer in time, or is full; the original error is ``__cause__``."""


class PublishError(UnavailableError):
    """The broker did not acknowledge the record; the subclass says whether it may be written."""


class NotPublishedError(PublishError):
    """The record never left the producer (no connection, no metadata): it is not in the log."""


class PublishUnconfirmedError(PublishError):
    """The record was sent but its acknowledgement never came, even for a resend: it may be in the log."""


class Reraise(ContextDecorator):
    """Raise ``error("<context>: <cause>")``, chained, for any of ``causes`` raised in the block.

    Stateless, so one instance serves as a ``with`` block and as a decorator, as often as needed.
    A caller that must act between catching and raising (the publisher discards a failed
    producer) catches :attr:`causes` itself and raises :meth:`mapped`: the same mapping.
    """

    def __init__(self, error: type[Exception], context: str, causes: tuple[type[Exception], ...]) -> None:
        self._error = error
        self._context = context
        self.causes = causes

    def mapped(self, cause: BaseException) -> Exception:
        """The error ``cause`` is raised as (chain it: ``raise reraise.mapped(exc) from exc``)."""
        return self._error(f"{self._context}: {cause!r}")

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if isinstance(exc, self.causes):
            raise self.mapped(exc) from exc
