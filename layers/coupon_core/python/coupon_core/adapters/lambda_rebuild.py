"""A function of the rebuild code invoked synchronously (:class:`FunctionInvoker`): the builder,
for a coupon's missing state the intake waits for (:class:`BuilderInvoker`), and the rebuild, for
a coupon reconciled on demand for the operators (``lambda_reconcile.RebuildInvoker``).

Neither HTTP function does these in-process. The intake holds no database credential and no
network path to the database (the function every user reaches must not reach the most valuable
data), so a state it finds missing is built by the builder function, which has them. A
reconcile waits up to ten seconds for the coupon's state lock, and the rebuild function has the
settings for it (``functions/rebuild``).

The intake's ask is bounded: one attempt (a throttled or failed invoke is answered 503 at once,
and the client retries after ``Retry-After``), and a read timeout above the build's own bound
(the state lock's wait, the read of the records in flight, two database reads).
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from coupon_core.domain.reservations import STATE_BUILD_TIMEOUT_S, MissingState
from coupon_core.errors import UnavailableError

BUILT = frozenset(state.value for state in MissingState) - {MissingState.BUILD}  # what a build answers


class FunctionInvoker:
    """The function named ``function_name``, read from :attr:`variable`. Without a name, every
    call is unavailable: an environment without the function answers those requests 503."""

    variable: ClassVar[str]
    role: ClassVar[str]  # the function, as errors name it

    def __init__(self, function_name: str | None, client: Any = None) -> None:
        self._function_name = function_name
        self._client = client

    def invoke(self, event: dict[str, Any]) -> dict[str, Any]:
        role = self.role
        if self._function_name is None:
            raise UnavailableError(f"{self.variable} is not set: this environment has no {role} function to invoke")
        try:
            invoked = self._lambda().invoke(FunctionName=self._function_name, Payload=json.dumps(event).encode())
            reply = json.loads(invoked["Payload"].read())
        except Exception as exc:  # botocore's (making the client too), a payload not JSON: the function is unreachable
            raise UnavailableError(f"{role} function unreachable: {exc!r}") from exc
        if invoked.get("FunctionError"):
            detail = reply.get("errorMessage", reply) if isinstance(reply, dict) else reply
            raise UnavailableError(f"{role} function failed: {detail}")
        if not isinstance(reply, dict):
            raise UnavailableError(f"{role} function replied {reply!r}, not an object")
        return reply

    def _lambda(self) -> Any:
        """The Lambda client, made on first use, off the hot path (a missing state, a reconcile):
        inside :meth:`invoke`'s ``try``, so that a client botocore cannot make (no region) is the
        function unreachable too."""
        if self._client is None:
            import boto3  # noqa: PLC0415
            from botocore.config import Config  # noqa: PLC0415

            config = Config(connect_timeout=1, read_timeout=STATE_BUILD_TIMEOUT_S, retries={"total_max_attempts": 1})
            self._client = boto3.client("lambda", config=config)
        return self._client


class BuilderInvoker(FunctionInvoker):
    """The builder function (``BUILDER_FUNCTION``): the intake's ``IssueService`` calls its ``build``."""

    variable, role = "BUILDER_FUNCTION", "builder"

    def build(self, coupon_id: int) -> MissingState:
        """The builder's build of a missing state (``{"stateMissing": coupon_id}``)."""
        reply = self.invoke({"stateMissing": coupon_id})
        state = reply.get("state")
        if not isinstance(state, str) or state not in BUILT:
            raise UnavailableError(f"builder function replied {reply!r}, not a state build")
        return MissingState(state)
