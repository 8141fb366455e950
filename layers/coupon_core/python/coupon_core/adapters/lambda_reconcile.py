"""The rebuild function invoked for one coupon, synchronously: the operators' reconcile route
(``functions/coupons``) waits for its report."""

from __future__ import annotations

from typing import Any

from coupon_core.adapters.lambda_rebuild import FunctionInvoker


class RebuildInvoker(FunctionInvoker):
    """The rebuild function (``REBUILD_FUNCTION``): the operators' reconcile route."""

    variable, role = "REBUILD_FUNCTION", "rebuild"

    def reconcile(self, coupon_id: int) -> dict[str, Any]:
        """The rebuild's report for ``{"couponId": coupon_id}``."""
        return self.invoke({"couponId": coupon_id})
