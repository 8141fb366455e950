"""The edge cache of a sale's availability, as CloudFront and the web ACL evaluate it: the one
cached route and its cache key, the edge's requests counted per viewer instead of per IP, the
function before the cache (run in Node, as CloudFront runs its JavaScript: 404 for any other path
or spelling of an id, the viewer's address written), CORS for the listed pages at the edge, and
no edge on LocalStack (its free edition has no CloudFront)."""

from __future__ import annotations

import json
import shutil
import subprocess
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import pytest

from coupon_cdk.config import CONTEXT_KEY, cdk_json_context, load
from coupon_cdk.edge import CACHE_S, EDGE_PATH, VIEWER_HEADER, edge_function, shield_region
from functions.http_api.request import EDGE_HEADER
from tests.infra.template_support import function_id, resources, resources_of

OPENAPI = Path(__file__).resolve().parents[2] / "docs" / "openapi.json"


def only(template: Any, kind: str) -> dict[str, Any]:
    (found,) = resources(template, kind).values()
    return found["Properties"]


@pytest.mark.parametrize("env", ["dev", "small", "prod"])
def test_the_edge_caches_one_route_a_second_per_coupon(env, request):
    template = request.getfixturevalue(env)
    config = only(template, "AWS::CloudFront::Distribution")["DistributionConfig"]
    (behavior,) = config["CacheBehaviors"]
    assert behavior["PathPattern"] == EDGE_PATH
    assert behavior["AllowedMethods"] == ["GET", "HEAD"]
    policy = only(template, "AWS::CloudFront::CachePolicy")["CachePolicyConfig"]
    assert (policy["MinTTL"], policy["DefaultTTL"], policy["MaxTTL"]) == (0, CACHE_S, CACHE_S)
    key = policy["ParametersInCacheKeyAndForwardedToOrigin"]
    assert key["HeadersConfig"] == {"HeaderBehavior": "none"}  # no Origin: CORS is the edge's own
    # answers under 1,000 bytes, which CloudFront never compresses: no encoding in the key
    assert (key["EnableAcceptEncodingGzip"], key["EnableAcceptEncodingBrotli"], behavior["Compress"]) == (
        False,
        False,
        False,
    )
    assert (key["QueryStringsConfig"]["QueryStringBehavior"], key["CookiesConfig"]["CookieBehavior"]) == (
        "none",
        "none",
    )
    (origin,) = config["Origins"]
    assert origin["OriginShield"]["Enabled"] is True
    (header,) = origin["OriginCustomHeaders"]
    assert header["HeaderName"] == EDGE_HEADER
    assert "resolve:secretsmanager" in json.dumps(header["HeaderValue"])  # never the value itself
    # every other path: the edge's function, before the cache or the API
    # the function before the cache, on both behaviours; the viewer's address to the API, not in the key
    (function_id,) = resources(template, "AWS::CloudFront::Function")
    for cached in (config["DefaultCacheBehavior"], behavior):
        (association,) = cached["FunctionAssociations"]
        assert association["EventType"] == "viewer-request"
        assert function_id in json.dumps(association["FunctionARN"])
    forwarded = only(template, "AWS::CloudFront::OriginRequestPolicy")["OriginRequestPolicyConfig"]
    assert forwarded["HeadersConfig"] == {"HeaderBehavior": "whitelist", "Headers": [VIEWER_HEADER]}
    # a 404 and an outage kept as long as an answer (an outage reaches the API once a second), the web ACL's 403 not
    assert {error["ErrorCode"]: error["ErrorCachingMinTTL"] for error in config["CustomErrorResponses"]} == {
        404: CACHE_S, 403: 0, 500: CACHE_S, 502: CACHE_S, 503: CACHE_S, 504: CACHE_S
    }  # fmt: skip


def test_the_cached_path_is_the_routes(request):
    paths = json.loads(OPENAPI.read_text())["paths"]
    cached = [path for path in paths if fnmatch(path.replace("{couponId}", "5"), EDGE_PATH)]
    assert cached == ["/coupons/{couponId}/availability"]
    assert not fnmatch("/coupons/5/issues/7", EDGE_PATH)


def test_the_edges_requests_are_counted_per_viewer_and_every_other_request_per_ip(prod):
    """AWS WAF Developer Guide, "Rate-based rule statement": a scope-down statement narrows what a
    rule counts; a custom key on a header counts each of its values apart."""
    acl = only(prod, "AWS::WAFv2::WebACL")
    rules = {
        rule["Name"]: rule["Statement"]["RateBasedStatement"]
        for rule in acl["Rules"]
        if "RateBasedStatement" in rule["Statement"]
    }
    per_ip, per_viewer = rules["RatePerIp"], rules["RatePerViewer"]
    from_edge = per_viewer["ScopeDownStatement"]["ByteMatchStatement"]
    assert per_ip["ScopeDownStatement"]["NotStatement"]["Statement"]["ByteMatchStatement"] == from_edge
    assert from_edge["FieldToMatch"] == {"SingleHeader": {"Name": EDGE_HEADER.lower()}}
    assert from_edge["PositionalConstraint"] == "EXACTLY"
    (origin,) = only(prod, "AWS::CloudFront::Distribution")["DistributionConfig"]["Origins"]
    (sent,) = origin["OriginCustomHeaders"]
    assert from_edge["SearchString"] == sent["HeaderValue"]  # the same secret, resolved by CloudFormation
    assert per_viewer["CustomKeys"] == [
        {"Header": {"Name": VIEWER_HEADER, "TextTransformations": [{"Priority": 0, "Type": "NONE"}]}}
    ]
    assert per_viewer["Limit"] == per_ip["Limit"]


def test_local_has_no_edge(local):
    assert resources(local, "AWS::CloudFront::Distribution") == {}
    coupons = resources(local, "AWS::Lambda::Function")[function_id(local, "coupons")]
    assert "EDGE_SECRET_ARN" not in coupons["Properties"]["Environment"]["Variables"]


@pytest.mark.parametrize("env", ["dev", "small", "prod"])
def test_the_coupons_function_reads_the_edges_secret_and_no_other_function_does(env, request):
    """So it knows the edge's asks (functions/coupons/dependencies.py, from_edge)."""
    template = request.getfixturevalue(env)
    secrets = resources(template, "AWS::SecretsManager::Secret")
    (secret_id,) = [logical_id for logical_id in secrets if "Edge" in logical_id]
    coupons = resources(template, "AWS::Lambda::Function")[function_id(template, "coupons")]
    assert coupons["Properties"]["Environment"]["Variables"]["EDGE_SECRET_ARN"] == {"Ref": secret_id}
    for name in ("intake", "coupons", "worker", "dlq", "builder", "rebuild", "relay", "migrate", "topic"):
        readable = "".join(resources_of(template, name, "secretsmanager:GetSecretValue"))
        assert (secret_id in readable) is (name == "coupons"), name


def at_the_edge(method: str, uri: str, headers: dict[str, str]) -> dict[str, Any]:
    """What the edge's function makes of a request: CloudFront's event, run by Node."""
    event = {"viewer": {"ip": "203.0.113.7"}, "request": {
        "method": method, "uri": uri, "querystring": {"utm": {"value": "x"}},
        "headers": {name.lower(): {"value": value} for name, value in headers.items()}}}  # fmt: skip
    script = edge_function() + f"console.log(JSON.stringify(handler({json.dumps(event)})));"
    done = subprocess.run(["node", "-e", script], capture_output=True, text=True, check=True)
    return dict(json.loads(done.stdout))


@pytest.mark.skipif(shutil.which("node") is None, reason="Node runs the edge's function")
@pytest.mark.parametrize(
    ("method", "uri"),
    [("GET", "/coupons/5/issues/7"), ("GET", "/coupons/05/availability"), ("GET", "/coupons/0/availability"),
     ("GET", "/coupons/+5/availability"), ("GET", "/coupons/5/availability/"), ("POST", "/coupons/5/availability"),
     ("GET", "/coupons/12345678901234567890/availability"), ("GET", "/coupon-issues"),
     ("HEAD", "/coupons/5/availability")],
)  # fmt: skip
def test_the_edge_answers_404_for_anything_but_a_coupon_ids_availability(method, uri):
    answer = at_the_edge(method, uri, {"Origin": "https://shop.example.com"})
    assert answer["statusCode"] == 404
    assert answer["headers"]["content-type"] == {"value": "application/json"}
    assert json.loads(answer["body"]["data"]) == {
        "status": "NOT_FOUND", "error": "the edge serves GET /coupons/{couponId}/availability only"
    }  # fmt: skip


@pytest.mark.skipif(shutil.which("node") is None, reason="Node runs the edge's function")
@pytest.mark.parametrize("headers", [{}, {VIEWER_HEADER: "198.51.100.1"}])
def test_the_edge_writes_the_viewers_address_itself(headers):
    request = at_the_edge("GET", "/coupons/9223372036854775807/availability", headers)
    assert request["uri"] == "/coupons/9223372036854775807/availability"
    assert request["headers"][VIEWER_HEADER] == {"value": "203.0.113.7"}  # never what the viewer sent
    assert request["querystring"] == {}


def test_every_listed_page_reads_the_edges_answers_cached_or_not(prod):
    """CloudFront Developer Guide, "Understand response headers policies": the CORS headers are
    added to every answer the behaviour sends a CORS request, from the cache or the origin."""
    config = only(prod, "AWS::CloudFront::Distribution")["DistributionConfig"]
    (behavior,) = config["CacheBehaviors"]
    (policy_id,) = resources(prod, "AWS::CloudFront::ResponseHeadersPolicy")
    assert policy_id in json.dumps(behavior["ResponseHeadersPolicyId"])
    cors = only(prod, "AWS::CloudFront::ResponseHeadersPolicy")["ResponseHeadersPolicyConfig"]["CorsConfig"]
    listed = load(cdk_json_context()[CONTEXT_KEY], "prod", deploying=False).api.cors_origins
    assert cors["AccessControlAllowOrigins"]["Items"] == list(listed) != []
    assert cors["AccessControlAllowMethods"]["Items"] == ["GET", "HEAD"]
    assert cors["AccessControlExposeHeaders"]["Items"] == ["Retry-After"]
    assert (cors["AccessControlAllowCredentials"], cors["OriginOverride"]) == (False, True)


def test_an_environment_listing_no_page_has_no_cors_at_the_edge(dev):
    assert resources(dev, "AWS::CloudFront::ResponseHeadersPolicy") == {}


def test_origin_shield_is_in_the_apis_region_or_the_nearest_one():
    assert (shield_region("us-east-1"), shield_region("ap-northeast-2"), shield_region("us-west-1")) == (
        "us-east-1", "ap-northeast-2", "us-west-2"
    )  # fmt: skip
    with pytest.raises(ValueError, match="no Origin Shield Region known for me-central-1"):
        shield_region("me-central-1")
