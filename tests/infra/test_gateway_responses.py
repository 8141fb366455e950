"""API Gateway's own refusals as a page reads them on AWS, which LocalStack cannot show (it
ignores gateway responses): every gateway response of every environment's template rendered
with a Velocity engine (airspeed) as API Gateway renders it, its headers mapped from the request
as API Gateway maps them.

API Gateway's reference, "$context Variables for data models, authorizers, mapping templates,
and CloudWatch access logging": ``$context.error.messageString`` is "the quoted value of
$context.error.message, namely "$context.error.message"" (rendered here as a JSON string, so a
quote inside is escaped); ``$context.error.validationErrorString`` is "a string containing a
detailed validation error message" (rendered raw, quotes and all: nothing says it is escaped).
"""

from __future__ import annotations

import json
from typing import Any

import airspeed
import pytest

from coupon_cdk.config import CONTEXT_KEY, cdk_json_context, load
from tests.infra.template_support import resources

# Messages API Gateway writes, and ones with the characters that break a template that quotes them.
MESSAGES = ("Forbidden", "Unauthorized", 'User is not authorized to access "this" resource', "back\\slash", "")
VALIDATION = '[object has missing required properties (["couponId","userId"])]'
RESPONSE_TYPE = "REQUEST_TOO_LARGE"  # what DEFAULT_4XX stands for, here
ENVIRONMENTS = ("dev", "small", "prod", "local")


def render(template: str, message: str) -> str:
    error = {"message": message, "messageString": json.dumps(message), "responseType": RESPONSE_TYPE,
             "validationErrorString": VALIDATION}  # fmt: skip
    return str(airspeed.Template(template).merge({"context": {"error": error}}))


def mapped_headers(response: dict[str, Any], request_headers: dict[str, str]) -> dict[str, str]:
    """A gateway response's headers for a request: a quoted literal, or a request header's value
    (``method.request.header.Name``; absent when the request has none)."""
    headers = {}
    for key, value in response.get("ResponseParameters", {}).items():
        name = key.removeprefix("gatewayresponse.header.")
        if value.startswith("'") and value.endswith("'"):
            headers[name] = value[1:-1]
        elif value.startswith("method.request.header."):
            wanted = value.removeprefix("method.request.header.").lower()
            found = next((v for k, v in request_headers.items() if k.lower() == wanted), None)
            if found is not None:
                headers[name] = found
        else:
            raise AssertionError(f"{key}: a mapping this test does not know: {value}")
    return headers


def gateway_responses(template) -> dict[str, dict[str, Any]]:
    found = resources(template, "AWS::ApiGateway::GatewayResponse").values()
    return {r["Properties"]["ResponseType"]: r["Properties"] for r in found}


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_every_gateway_refusal_is_json_with_a_status_and_an_error(env, request):
    responses = gateway_responses(request.getfixturevalue(env))
    assert {"DEFAULT_4XX", "DEFAULT_5XX", "WAF_FILTERED", "UNAUTHORIZED", "ACCESS_DENIED", "THROTTLED",
            "BAD_REQUEST_BODY"} <= set(responses)  # fmt: skip
    for kind, response in responses.items():
        for message in MESSAGES:
            body = render(response["ResponseTemplates"]["application/json"], message)
            try:
                parsed = json.loads(body)
            except json.JSONDecodeError as exc:
                raise AssertionError(f"{env} {kind}: not JSON: {body}") from exc
            assert isinstance(parsed["status"], str), (env, kind)
            assert parsed["status"], (env, kind)
            assert isinstance(parsed["error"], str), (env, kind)


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_the_gateways_refusals_say_what_they_mean(env, request):
    """The status a client acts on: only a 503 UNAVAILABLE and a 429 say nothing was reserved; a
    gateway 5xx (the function failed or timed out, perhaps after its reservation) is UNCONFIRMED."""
    responses = gateway_responses(request.getfixturevalue(env))

    def said(kind: str) -> tuple[str | None, str, str]:
        body = json.loads(render(responses[kind]["ResponseTemplates"]["application/json"], 'a "quoted" word'))
        return responses[kind].get("StatusCode"), body["status"], body["error"]

    assert said("DEFAULT_5XX") == ("503", "UNCONFIRMED", 'a "quoted" word')
    assert said("THROTTLED")[:2] == ("429", "THROTTLED")
    assert said("WAF_FILTERED") == ("403", "FORBIDDEN", 'a "quoted" word')
    assert said("UNAUTHORIZED") == ("401", "UNAUTHORIZED", 'a "quoted" word')
    assert said("DEFAULT_4XX") == (None, RESPONSE_TYPE, 'a "quoted" word')
    assert said("BAD_REQUEST_BODY")[:2] == ("422", "INVALID_REQUEST")
    for kind in ("AUTHORIZER_FAILURE", "AUTHORIZER_CONFIGURATION_ERROR"):
        assert said(kind)[:2] == ("503", "UNAVAILABLE"), kind
    for kind, response in responses.items():
        retry = mapped_headers(response, {}).get("Retry-After")
        assert (retry == "1") == (response.get("StatusCode") in ("429", "503")), kind


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_every_listed_origin_reads_the_gateways_refusals(env, request):
    origins = load(cdk_json_context()[CONTEXT_KEY], env, deploying=False).api.cors_origins
    for kind, response in gateway_responses(request.getfixturevalue(env)).items():
        for origin in origins:
            headers = mapped_headers(response, {"origin": origin})
            assert headers["Access-Control-Allow-Origin"] == origin, (env, kind, origin)
            assert headers["Access-Control-Expose-Headers"] == "Retry-After", (env, kind)
            assert headers["Vary"] == "Origin", (env, kind)
        if not origins:
            assert "Access-Control-Allow-Origin" not in mapped_headers(response, {"Origin": "https://a.example"})
