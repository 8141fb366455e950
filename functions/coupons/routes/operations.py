"""The operators' routes (admin, IAM-authorised on AWS): pages of coupons and of a coupon's
issues (JSON, or CSV to export), rename or move a coupon, close and reopen it, top up its stock,
reconcile it now."""

import csv
import io
from dataclasses import asdict
from http import HTTPStatus
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Depends, Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body

from coupon_core.backend_errors import InvalidChangeError
from coupon_core.domain.coupons import Coupon
from coupon_core.domain.operations import AdminCatalog, CouponAdmin, CouponChanges, IssueEntry, OnDemandReconcile
from coupon_core.domain.ports import Reservations
from coupon_core.observability import logger
from functions.coupons.dependencies import catalog, coupon_admin, on_demand_reconcile, reservations
from functions.coupons.routes.coupons import coupon_body
from functions.coupons.routes.responses import from_model
from functions.http_api.answers import RequestRefusedError
from functions.http_api.openapi_answers import documented
from functions.http_api.parameters import ExportFormat, PageAfter, PageLimit, PathId
from functions.http_api.schemas import (
    ChangeCouponRequest,
    CouponBody,
    CouponPage,
    IssueEntryBody,
    IssuePage,
    ReconcileAnswer,
    TopUpRequest,
)

router = Router()

Catalog = Annotated[AdminCatalog, Depends(catalog)]
Store = Annotated[Reservations, Depends(reservations)]
Admin = Annotated[CouponAdmin, Depends(coupon_admin)]
CSV_EXPORT = {
    "content": {"text/csv": {"schema": {"type": "string", "description": "a header row, then one row an issue"}}},
    "headers": {
        "X-Next-After": {
            "description": "format=csv: the after of the next page; absent on the last page",
            "schema": {"type": "string", "pattern": "^[0-9]+$"},
        }
    },
}
CHANGED = documented((200, "OK: the coupon as changed", CouponBody), {404: "COUPON_NOT_FOUND", 503: "UNAVAILABLE"})


@router.get(
    "/coupons",
    summary="Coupons, a page at a time (admin)",
    responses=documented((200, "OK", CouponPage), {503: "UNAVAILABLE"}),
)
def list_coupons(coupons: Catalog, store: Store, after: PageAfter = 0, limit: PageLimit = 100) -> Response[Any]:
    page = coupons.page(after, limit)
    bodies = [coupon_body("OK", c, reserved=store.reserved_count(c.coupon_id)) for c in page]
    following = page[-1].coupon_id if len(page) == limit else None
    return from_model(HTTPStatus.OK, CouponPage(status="OK", coupons=bodies, next=following))


@router.patch("/coupons/<couponId>", summary="Rename a coupon or move its window (admin)", responses=CHANGED)
def change_coupon(
    couponId: PathId,  # noqa: N803 - path parameters are camelCase on the wire
    request: Annotated[ChangeCouponRequest, Body()],
    admin: Admin,
    store: Store,
) -> Response[Any]:
    changes = CouponChanges(name=request.name, issue_starts_at=request.issueStartsAt, issue_ends_at=request.issueEndsAt)
    return _changed(admin, store, couponId, changes)


@router.post("/coupons/<couponId>/close", summary="Close a coupon: requests answer CLOSED (admin)", responses=CHANGED)
def close_coupon(couponId: PathId, admin: Admin, store: Store) -> Response[Any]:  # noqa: N803
    return _changed(admin, store, couponId, CouponChanges(closed=True))


@router.post("/coupons/<couponId>/reopen", summary="Reopen a closed coupon (admin)", responses=CHANGED)
def reopen_coupon(couponId: PathId, admin: Admin, store: Store) -> Response[Any]:  # noqa: N803
    return _changed(admin, store, couponId, CouponChanges(closed=False))


@router.post("/coupons/<couponId>/top-up", summary="Add copies to a coupon's stock (admin)", responses=CHANGED)
def top_up(
    couponId: PathId,  # noqa: N803
    request: Annotated[TopUpRequest, Body()],
    admin: Admin,
    store: Store,
) -> Response[Any]:
    return _changed(admin, store, couponId, CouponChanges(add_copies=request.copies))


@router.get(
    "/coupons/<couponId>/issues",
    summary="A coupon's issues, a page at a time, as JSON or CSV (admin)",
    responses=documented(
        (200, "OK (format=csv: text/csv, a header row first)", IssuePage),
        {404: "COUPON_NOT_FOUND", 503: "UNAVAILABLE"},
        alternative=CSV_EXPORT,
    ),
)
def list_issues(
    couponId: PathId,  # noqa: N803
    coupons: Catalog,
    after: PageAfter = 0,
    limit: PageLimit = 100,
    export: ExportFormat = "json",
) -> Response[Any]:
    if coupons.find(couponId) is None:
        raise RequestRefusedError("COUPON_NOT_FOUND", coupon=couponId)
    entries = [_entry_body(entry) for entry in coupons.issues_page(couponId, after, limit)]
    following = entries[-1].issueId if len(entries) == limit else None
    if export == "csv":
        return Response(HTTPStatus.OK, content_type="text/csv", body=_csv(entries), headers=_next_page(following))
    return from_model(HTTPStatus.OK, IssuePage(status="OK", couponId=couponId, issues=entries, next=following))


@router.post(
    "/coupons/<couponId>/reconcile",
    summary="Reconcile a coupon's Redis state with the database now, and its report (admin)",
    responses=documented(
        (200, "OK, with the rebuild's report", ReconcileAnswer), {404: "COUPON_NOT_FOUND", 503: "UNAVAILABLE"}
    ),
)
def reconcile(
    couponId: PathId,  # noqa: N803
    coupons: Catalog,
    reconciler: Annotated[OnDemandReconcile, Depends(on_demand_reconcile)],
) -> Response[Any]:
    if coupons.find(couponId) is None:
        raise RequestRefusedError("COUPON_NOT_FOUND", coupon=couponId)
    report = reconciler.reconcile(couponId)
    return from_model(HTTPStatus.OK, ReconcileAnswer(status="OK", couponId=couponId, report=report))


def _changed(admin: CouponAdmin, store: Reservations, coupon_id: int, changes: CouponChanges) -> Response[Any]:
    try:
        coupon: Coupon | None = admin.change(coupon_id, changes)
    except InvalidChangeError as exc:
        raise RequestRefusedError("INVALID_CHANGE", problem=exc) from None
    if coupon is None:
        raise RequestRefusedError("COUPON_NOT_FOUND", coupon=coupon_id)
    logger.info(
        "coupon changed", extra={"couponId": coupon_id, "changes": {k: str(v) for k, v in asdict(changes).items()}}
    )
    return from_model(HTTPStatus.OK, coupon_body("OK", coupon, reserved=store.reserved_count(coupon_id)))


def _entry_body(entry: IssueEntry) -> IssueEntryBody:
    def moment(value: Any) -> str | None:
        return value.isoformat() if value is not None else None

    return IssueEntryBody(
        issueId=entry.issue_id,
        userId=entry.user_id,
        requestId=entry.request_id,
        status=entry.status,
        reservedAt=entry.reserved_at.isoformat(),
        issuedAt=entry.issued_at.isoformat(),
        expiresAt=moment(entry.expires_at),
        usedAt=moment(entry.used_at),
        canceledAt=moment(entry.canceled_at),
    )


def _csv(entries: list[IssueEntryBody]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(IssueEntryBody.model_fields), lineterminator="\n")
    writer.writeheader()
    writer.writerows(entry.model_dump() for entry in entries)
    return out.getvalue()


def _next_page(following: int | None) -> dict[str, str]:
    """CSV has no room for the cursor: the next page's ``after`` travels in a header."""
    return {} if following is None else {"X-Next-After": str(following)}
