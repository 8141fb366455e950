"""The gateway's request models are the functions' pydantic models, in the draft 4 that API
Gateway reads: equal to them in the synthesized template (a bound past 2^53 as the nearest
double: CDK carries numbers as JavaScript's), and agreeing with them on bodies."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft4Validator
from pydantic import BaseModel, ValidationError

from coupon_cdk.request_models import draft4
from functions.http_api.schemas import ChangeCouponRequest, CreateCouponRequest, TopUpRequest
from functions.intake.request import IssueRequest
from local.testkit.bad_requests import BAD_ISSUE_BODIES
from tests.infra.template_support import resources

MODELS: dict[str, type[BaseModel]] = {
    "IssueRequest": IssueRequest,
    "CreateCoupon": CreateCouponRequest,
    "ChangeCoupon": ChangeCouponRequest,
    "TopUp": TopUpRequest,
}
MOMENT = "2026-12-24T12:00:00Z"
BODIES: dict[str, list[Any]] = {  # well-formed and malformed bodies of each model
    "IssueRequest": [{"couponId": 3, "userId": 7}, {"couponId": 3}, {"couponId": 3, "userId": None}]
    + [body for body, _ in BAD_ISSUE_BODIES],
    "CreateCoupon": [
        {"name": "n", "totalQuantity": 5, "issueStartsAt": MOMENT, "issueEndsAt": "2026-12-24T13:00:00Z"},
        {"name": "n", "totalQuantity": 5, "issueStartsAt": MOMENT, "issueEndsAt": MOMENT + "x", "validDays": None},
        {"name": "", "totalQuantity": 5, "issueStartsAt": MOMENT, "issueEndsAt": MOMENT},
        {"name": "n", "totalQuantity": 0, "issueStartsAt": MOMENT, "issueEndsAt": MOMENT},
        {"name": "n", "totalQuantity": 5, "issueStartsAt": MOMENT},
        {"name": "n", "totalQuantity": 5, "issueStartsAt": MOMENT, "issueEndsAt": MOMENT, "validDays": 0},
        {"name": "n", "totalQuantity": 5, "issueStartsAt": MOMENT, "issueEndsAt": MOMENT, "extra": 1},
    ],
    "ChangeCoupon": [{"name": "m"}, {}, {"name": ""}, {"nickname": "m"}, {"issueEndsAt": MOMENT}],
    "TopUp": [{"copies": 2}, {"copies": 0}, {"copies": "2"}, {}, {"copies": 2, "more": 1}],
}


FUNCTIONS_ALONE = {"value_error", "datetime_from_date_parsing", "less_than_equal"}  # pydantic's error types


def template_schema(template, name: str) -> dict[str, Any]:
    models = resources(template, "AWS::ApiGateway::Model")
    (model,) = [model for logical_id, model in models.items() if f"Api{name}" in logical_id]
    return model["Properties"]["Schema"]


def as_synthesized(schema: Any) -> Any:
    """``schema`` with its integers past 2^53 as the nearest double: what the template carries."""
    if isinstance(schema, dict):
        return {key: as_synthesized(value) for key, value in schema.items()}
    if isinstance(schema, list):
        return [as_synthesized(value) for value in schema]
    if isinstance(schema, int) and not isinstance(schema, bool) and abs(schema) > 2**53:
        return float(schema)
    return schema


@pytest.mark.parametrize("env", ["dev", "small", "prod"])
@pytest.mark.parametrize("name", MODELS)
def test_the_gateways_model_is_the_functions_schema(env, name, request):
    synthesized = as_synthesized(template_schema(request.getfixturevalue(env), name))
    assert synthesized == as_synthesized(draft4(MODELS[name]))


@pytest.mark.parametrize("name", MODELS)
def test_the_gateway_refuses_no_body_the_function_accepts_and_each_schema_rule_alike(name, dev):
    """Where a body breaks a rule the schema states, both refuse it. What the edge cannot see is
    the function's alone, so the gateway may let such a body through, never the other way round:
    a rule a model checks in code (the window's order, a change that is not all null), a time
    that is not ISO 8601 (draft 4 names the format, API Gateway does not check it), an id of
    2^63 (the bound, a double in the template, rounds up to it)."""
    validator = Draft4Validator(template_schema(dev, name))
    for body in BODIES[name]:
        try:
            MODELS[name].model_validate(body)
            accepted = True
        except ValidationError as exc:
            accepted = False
            only_in_code = all(error["type"] in FUNCTIONS_ALONE for error in exc.errors())
        edge = validator.is_valid(body)
        assert edge or not accepted, f"the gateway refuses {body!r}, which the function accepts"
        assert not edge or accepted or only_in_code, f"the gateway lets {body!r} through, against its schema"
