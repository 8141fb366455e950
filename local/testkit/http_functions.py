"""API Gateway's routing of the HTTP API, for what runs the functions in-process (the tests,
chaos, the fuzzer's gateway): ``POST /coupon-issues`` to the intake, every other request to the
coupons function, as ``coupon_cdk.api`` routes them on AWS and LocalStack."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from functions.intake.request import is_issue_route

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


def handler_for(method: str, path: str) -> Handler:
    """The handler of the function API Gateway sends ``method path`` to (imported on first use:
    the caller sets the functions' environment first)."""
    if is_issue_route(method, path):
        from functions.intake.app import handler  # noqa: PLC0415

        return handler
    from functions.coupons.app import handler as coupons_handler  # noqa: PLC0415

    return coupons_handler


def answer(event: Mapping[str, Any], context: Any) -> dict[str, Any]:
    """The answer of the function API Gateway sends ``event`` to."""
    return handler_for(str(event.get("httpMethod")), str(event.get("path")))(dict(event), context)
