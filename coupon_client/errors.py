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
    """No AWS credentials in botocore's chain, or a profile that does not exist."""

    exit_code = 3


class SessionExpiredError(CouponsError):
    """The SSO session (or the temporary credentials) behind the profile has expired."""

    exit_code = 4


class UnknownEnvironmentError(CouponsError):
    """No stack for the environment in the region, or no region to look in."""

    exit_code = 5


class ForbiddenError(CouponsError):
    """401 or 403: the identity may not call the route (the message names the IAM action)."""

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
    """503 (or a 429 throttle): nothing changed; try again after the hint."""

    exit_code = 10


class NoAnswerError(CouponsError):
    """No answer, or one the API does not document (a 5xx from the gateway): the action may or may
    not have been carried out; look before repeating it."""

    exit_code = 11


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
)
