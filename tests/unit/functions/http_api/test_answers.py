"""The one table of refusals: every outcome the domain can refuse with has its answer there."""

from __future__ import annotations

import json
import re
from enum import StrEnum
from http import HTTPStatus
from pathlib import Path

import pytest

from coupon_core.backend_errors import DatabaseUnavailableError, LockUnavailableError
from coupon_core.domain.lifecycle import CopyOutcome
from coupon_core.domain.reservations import IssueOutcome
from coupon_core.errors import StateUnavailableError, UnavailableError
from functions.coupons.error_handlers import answer_to
from functions.http_api.answers import (
    REFUSALS,
    RETRY_AFTER_S,
    Answer,
    RequestRefusedError,
    answered,
    problems,
    refusal,
)

OPENAPI = json.loads((Path(__file__).resolve().parents[4] / "docs" / "openapi.json").read_text())
REFUSED_BY_THE_DOMAIN = (
    {outcome.value for outcome in IssueOutcome} - {"SUCCESS"}
    | {outcome.value for outcome in CopyOutcome}  # USED and CANCELED refuse the other change
)


@pytest.mark.parametrize("outcome", sorted(REFUSED_BY_THE_DOMAIN))
def test_every_refusal_of_the_domain_has_its_answer_in_the_table(outcome):
    assert outcome in REFUSALS


def test_every_refusal_status_is_documented_with_its_http_status():
    documented: dict[str, str] = {}
    for path in OPENAPI["paths"].values():
        for operation in path.values():
            for code, response in operation["responses"].items():
                documented[code] = documented.get(code, "") + " " + response["description"]
    for outcome, (status_code, status, _) in REFUSALS.items():
        if outcome == "NO_ROUTE":  # the one answer that belongs to no route
            continue
        assert re.search(rf"\b{status}\b", documented.get(str(int(status_code)), "")), (outcome, status_code, status)


def test_a_refusal_fills_its_message_and_every_503_says_when_to_retry():
    sold_out = refusal("SOLD_OUT", coupon=7)
    assert (sold_out.status_code, sold_out.body, sold_out.headers) == (
        HTTPStatus.CONFLICT,
        {"status": "SOLD_OUT", "error": "coupon 7 is sold out"},
        {},
    )
    for outcome, (status_code, _, _) in REFUSALS.items():
        if status_code == HTTPStatus.SERVICE_UNAVAILABLE:
            assert refusal(outcome, coupon=1, user=2, request="r").headers == {"Retry-After": RETRY_AFTER_S}


def test_a_raised_refusal_and_any_layers_outage_are_answered():
    assert answer_to(RequestRefusedError("COUPON_NOT_FOUND", coupon=3)).body == {
        "status": "COUPON_NOT_FOUND",
        "error": "coupon 3 does not exist",
    }
    for outage in (StateUnavailableError("x"), LockUnavailableError("x"), DatabaseUnavailableError("x")):
        assert isinstance(outage, UnavailableError)
        assert answer_to(outage).body["status"] == "UNAVAILABLE"


class _Outcomes(StrEnum):
    SOLD_OUT = "SOLD_OUT"
    SOMETHING_NEW = "SOMETHING_NEW"
    ALSO_NEW = "ALSO_NEW"


def test_an_outcome_without_its_answer_fails_at_import_naming_each_one():
    with pytest.raises(
        ImportError, match=r"^_Outcomes SOMETHING_NEW, ALSO_NEW: no answer in functions/http_api/answers.py$"
    ):
        answered(_Outcomes, besides=set())
    answered(_Outcomes, besides={_Outcomes.SOMETHING_NEW, _Outcomes.ALSO_NEW})  # answered elsewhere: no error


def test_an_answer_is_api_gateways_proxy_result_in_the_apis_json():
    answer = Answer(HTTPStatus.CONFLICT, {"status": "SOLD_OUT", "error": "é"}, {"Retry-After": "1"})
    assert answer.proxy_result() == {
        "statusCode": 409,
        "body": '{"status":"SOLD_OUT","error":"\\u00e9"}',
        "isBase64Encoded": False,
        "multiValueHeaders": {"Content-Type": ["application/json"], "Retry-After": ["1"]},
    }


def test_each_problem_is_named_where_it_is():
    assert problems([
        {"type": "missing", "loc": ("body", "userId"), "msg": "Field required"},
        {"type": "int_parsing", "loc": ("path", "couponId"), "msg": "Input should be a valid integer"},
        {"type": "json_invalid", "loc": ("body",), "msg": "JSON", "ctx": {"error": "not UTF-8 text"}},
        {"type": "json_invalid", "loc": ("body",)},
        {"type": "model_type", "loc": ("body",)},
    ]) == ("userId: Field required; path.couponId: Input should be a valid integer; body is not valid JSON: "
           "not UTF-8 text; body is not valid JSON: unreadable; body: invalid")  # fmt: skip


def test_a_problem_without_a_place_is_the_bodys_and_a_refusal_says_its_error():
    assert problems([{"type": "model_type", "msg": "Input should be an object"}]) == "body: Input should be an object"
    assert str(RequestRefusedError("NO_ROUTE", method="GET", path="/x")) == "no route for GET /x"
