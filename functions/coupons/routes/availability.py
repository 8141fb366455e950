"""``GET /coupons/{couponId}/availability``: a sale as a shop's page shows it (public, cached).

Every answer, a 404 and a 503 too, may be kept by shared caches (the edge) for a second, as long
as the service keeps its read (``availability.AVAILABILITY_MS``), and by no browser
(``Cache-Control: max-age=0, s-maxage=1``): however many pages poll, an outage of Redis reaches
the function about once a second per cache, as a sale does. The edge's requests (its header
carries the stack's secret: ``dependencies.from_edge``) are answered from a read of Redis made for
them, which the edge keeps a second; a page's from the container's read, at most a second old, which
a shared cache may keep for what is left of its second (``s-maxage=0`` for a read already held). So
``left`` reaches a page at most a second after Redis counted it, through the edge or not, while
the edge lets about one request a second per coupon through. ``asOf`` says how old ``left`` is.
"""

from dataclasses import replace
from http import HTTPStatus
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Depends, Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from coupon_core.domain.availability import AVAILABILITY_MS, AvailabilityService
from coupon_core.domain.records import from_millis
from coupon_core.domain.reservations import IssueOutcome
from coupon_core.errors import UnavailableError
from coupon_core.observability import logger
from functions.coupons.dependencies import availability, from_edge
from functions.coupons.routes.responses import as_response
from functions.http_api.answers import Answer, refusal
from functions.http_api.openapi_answers import documented
from functions.http_api.parameters import PathId
from functions.http_api.schemas import AvailabilityBody

router = Router()


def _kept_for(age_ms: int) -> dict[str, str]:
    """What a shared cache may keep a sale read ``age_ms`` ago: the rest of its second."""
    return {"Cache-Control": f"public, max-age=0, s-maxage={max(AVAILABILITY_MS - age_ms, 0) // 1000}"}


CACHED = _kept_for(0)  # every answer but a sale's: a second


def _kept(answer: Answer) -> Answer:
    return replace(answer, headers=answer.headers | CACHED)


def _time(millis: int) -> str:
    return from_millis(millis).isoformat(timespec="milliseconds")


@router.get(
    "/coupons/<couponId>/availability",
    summary="A sale's state, window and copies left (public, cached a second)",
    responses=documented(
        (200, "NOT_OPEN, OPEN, SOLD_OUT, ENDED or CLOSED", AvailabilityBody),
        {404: "COUPON_NOT_FOUND", 503: "UNAVAILABLE"},
    ),
)
def get_availability(
    couponId: PathId,  # noqa: N803 - path parameters are camelCase on the wire
    service: Annotated[AvailabilityService, Depends(availability)],
    edge: Annotated[bool, Depends(from_edge)],
) -> Response[dict[str, Any]]:
    try:
        found = service.availability(couponId, fresh=edge)
    except UnavailableError as exc:
        logger.warning("a sale's availability could not be read", extra={"detail": str(exc)})
        return as_response(_kept(refusal(IssueOutcome.UNAVAILABLE)))
    if found is None:
        return as_response(_kept(refusal(IssueOutcome.COUPON_NOT_FOUND, coupon=couponId)))
    sale = found.sale
    body = AvailabilityBody(
        status=found.state.value,
        couponId=couponId,
        serverTime=_time(found.server_time),
        startsAt=_time(sale.starts_at) if sale else None,
        endsAt=_time(sale.ends_at) if sale else None,
        total=sale.total if sale else None,
        left=sale.left if sale else None,
        asOf=_time(sale.read_at) if sale else None,
    )
    kept = _kept_for(found.server_time - sale.read_at) if sale else CACHED
    return as_response(Answer(HTTPStatus.OK, body.model_dump(), kept))
