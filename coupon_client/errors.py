"""What goes wrong between an operator and a deployed API, one class per cause, each with the exit
status the ``coupons`` command ends with (docs/operations.md, The coupons command, lists them).

The client raises these; the command prints the message on one line of standard error and exits
with the class's status. Usage errors (a bad argument, caught before anything is sent) are
Click's own, status 2.
"""

from __future__ import annotations

from typing import ClassVar


class CouponsError(Exception):
    """A failure the operator can act on; ``str()`` is the one line that says what to do."""

    exit_code: ClassVar[int] = 1


class NoCredentialsError(CouponsError):
    """No AWS credentials in botocore's chain, a profile that does not exist, or credentials AWS
    refuses as invalid."""

    exit_code = 3


class SessionExpiredError(CouponsError):
    """The SSO session (or the temporary credentials) behind the profile has expired, here or as
    AWS judged the request."""

    exit_code = 4


class UnknownEnvironmentError(CouponsError):
    """No stack for the environment in the region, or no region to look in."""

    exit_code = 5


class ForbiddenError(CouponsError):
    """401 or 403 from IAM: the identity may not call the route (the message names the IAM action)."""

    exit_code = 6


class NotFoundError(CouponsError):
    """404: no such coupon (or route)."""

    exit_code = 7


class RefusedError(CouponsError):
    """422: the API refused the request as malformed; nothing changed."""

    exit_code = 8


class ConflictError(CouponsError):
    """409: the coupon's or the issue's state forbids the action."""

    exit_code = 9


class UnavailableError(CouponsError):
    """503, or 429 (the stage's rate limit, or a web ACL answering 429), or an AWS API's throttle:
    nothing changed; try again after the hint."""

    exit_code = 10


class NoAnswerError(CouponsError):
    """No answer, or one the API does not document (a 5xx from the gateway): the action may or may
    not have been carried out; look before repeating it."""

    exit_code = 11


class UnreachableError(CouponsError):
    """No connection to the endpoint (a name that does not resolve, a port nobody listens on, a
    connect timeout): nothing was sent."""

    exit_code = 12


class TlsError(CouponsError):
    """The TLS handshake failed (a certificate not trusted, or for another name): nothing was sent."""

    exit_code = 13


class BlockedError(CouponsError):
    """403 from the web ACL (AWS WAF) in front of the API, not from IAM: a rule (the per-caller
    rate, Bot Control, the managed rules) blocked the request; nothing changed."""

    exit_code = 14


class NothingToMeasureError(CouponsError):
    """No line of the sale to measure (none was written in its window, or none was kept): the
    figures cannot be computed, which is not a sale measured fair."""

    exit_code = 15


EVERY_ERROR: tuple[type[CouponsError], ...] = (
    NoCredentialsError,
    SessionExpiredError,
    UnknownEnvironmentError,
    ForbiddenError,
    NotFoundError,
    RefusedError,
    ConflictError,
    UnavailableError,
    NoAnswerError,
    UnreachableError,
    TlsError,
    BlockedError,
    NothingToMeasureError,
)
