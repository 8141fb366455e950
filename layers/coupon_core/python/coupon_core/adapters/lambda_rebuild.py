"""Reconcile on demand: the rebuild function, invoked synchronously, and its report.

The intake does not reconcile in-process: a reconcile waits up to ten seconds for the coupon's
state lock on a blocking Redis call, which the intake's short socket timeout would cut; the
rebuild function has the settings for it (``functions/rebuild``).
"""

from __future__ import annotations

import json
from typing import Any

from coupon_core.errors import UnavailableError


class RebuildInvoker:
    def __init__(self, function_name: str, client: Any = None) -> None:
        self._function_name = function_name
        self._client = client

    def reconcile(self, coupon_id: int) -> dict[str, Any]:
        """The rebuild function's report for ``{"couponId": coupon_id}``."""
        try:
            answer = self._lambda().invoke(
                FunctionName=self._function_name, Payload=json.dumps({"couponId": coupon_id}).encode()
            )
            report = json.loads(answer["Payload"].read())
        except Exception as exc:  # botocore's errors, a payload that is not JSON: the rebuild is unreachable
            raise UnavailableError(f"rebuild function unreachable: {exc!r}") from exc
        if answer.get("FunctionError"):
            raise UnavailableError(f"rebuild function failed: {report.get('errorMessage', report)}")
        return dict(report)

    def _lambda(self) -> Any:
        if self._client is None:
            import boto3  # noqa: PLC0415 - only operators reconcile on demand; not on the hot path

            self._client = boto3.client("lambda")
        return self._client
