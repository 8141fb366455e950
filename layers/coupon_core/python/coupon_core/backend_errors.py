"""The errors only the functions behind the intake raise: the database's, the locks', a record's
or a letter's, the Kafka read-back's, an operator's change, a topic's. Part of the one tree that
``errors.py`` draws (its docstring places each), kept apart so that the intake, which raises none
of them, imports none; each subclasses a class of ``errors.py``, so a handler that catches
``UnavailableError`` or ``ConfigError`` catches these too.
"""

from __future__ import annotations

from coupon_core.errors import ConfigError, CouponError, UnavailableError


class SecretContentsError(ConfigError):
    """The database secret's value is not the JSON object of connection fields the functions read."""


class TopicShrinkError(ConfigError):
    """A topic was asked for fewer partitions than it has: Kafka's partitions only grow."""


class MalformedRecordError(CouponError, ValueError):
    """A Kafka record's value is not a valid version-1 issue record; the text says what is wrong."""


class UnreadableDeadLetterError(CouponError, ValueError):
    """A DLQ message that is neither a rejection letter nor an on-failure letter, or is incomplete."""


class UnknownCouponsError(CouponError, ValueError):
    """An on-demand reconcile named coupons that do not exist; nothing was changed."""


class InvalidChangeError(CouponError):
    """An operator's change would break a rule of the coupon; nothing changed. The text says which."""


class StateLostError(CouponError):
    """A coupon's state was lost mid-sale and may not be rebuilt yet: produces may be under way."""


class StockMismatchError(CouponError):
    """The guarded decrement found less stock than the locked row said: the transaction is undone."""


class DatabaseUnavailableError(UnavailableError):
    """The database could not be reached or refused the transaction."""


class LockUnavailableError(UnavailableError):
    """A coupon lock was still held by someone else when the wait ran out."""


class ReadBackError(UnavailableError):
    """Records could not be read back from Kafka by offset (broker down, range gone or too large)."""
