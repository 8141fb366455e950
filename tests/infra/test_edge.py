"""The edge cache of a sale's availability, as CloudFront and the web ACL evaluate it: the one
cached route and its cache key, the header that keeps the edge's requests out of the per-IP
count, the 404 every other path gets from the edge's function (run in Node, as CloudFront runs
its JavaScript), and no edge on LocalStack (its free edition has no CloudFront)."""

from __future__ import annotations

import json
import shutil
import subprocess
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import pytest

from coupon_cdk.edge import CACHE_S, EDGE_404, EDGE_HEADER, EDGE_PATH
from tests.infra.template_support import resources

OPENAPI = Path(__file__).resolve().parents[2] / "docs" / "openapi.json"


def only(template: Any, kind: str) -> dict[str, Any]:
    (found,) = resources(template, kind).values()
    return found["Properties"]


@pytest.mark.parametrize("env", ["dev", "small", "prod"])
def test_the_edge_caches_one_route_a_second_per_coupon_and_page_origin(env, request):
    template = request.getfixturevalue(env)
    config = only(template, "AWS::CloudFront::Distribution")["DistributionConfig"]
    (behavior,) = config["CacheBehaviors"]
    assert behavior["PathPattern"] == EDGE_PATH
    assert behavior["AllowedMethods"] == ["GET", "HEAD"]
    policy = only(template, "AWS::CloudFront::CachePolicy")["CachePolicyConfig"]
    assert (policy["MinTTL"], policy["DefaultTTL"], policy["MaxTTL"]) == (0, CACHE_S, CACHE_S)
    key = policy["ParametersInCacheKeyAndForwardedToOrigin"]
    assert key["HeadersConfig"] == {"HeaderBehavior": "whitelist", "Headers": ["Origin"]}
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
    (association,) = config["DefaultCacheBehavior"]["FunctionAssociations"]
    assert association["EventType"] == "viewer-request"
    assert {error["ErrorCode"]: error["ErrorCachingMinTTL"] for error in config["CustomErrorResponses"]} == {
        404: CACHE_S, 403: 0, 500: 0, 502: 0, 503: 0, 504: 0
    }  # fmt: skip


def test_the_cached_path_is_the_routes(request):
    paths = json.loads(OPENAPI.read_text())["paths"]
    cached = [path for path in paths if fnmatch(path.replace("{couponId}", "5"), EDGE_PATH)]
    assert cached == ["/coupons/{couponId}/availability"]
    assert not fnmatch("/coupons/5/issues/7", EDGE_PATH)


def test_the_edges_requests_are_kept_out_of_the_per_ip_count_and_no_others(prod):
    acl = only(prod, "AWS::WAFv2::WebACL")
    (rate,) = [rule for rule in acl["Rules"] if rule["Name"] == "RatePerIp"]
    match = rate["Statement"]["RateBasedStatement"]["ScopeDownStatement"]["NotStatement"]["Statement"]
    header = match["ByteMatchStatement"]
    assert header["FieldToMatch"] == {"SingleHeader": {"Name": EDGE_HEADER.lower()}}
    assert header["PositionalConstraint"] == "EXACTLY"
    (origin,) = only(prod, "AWS::CloudFront::Distribution")["DistributionConfig"]["Origins"]
    (sent,) = origin["OriginCustomHeaders"]
    assert header["SearchString"] == sent["HeaderValue"]  # the same secret, resolved by CloudFormation


def test_local_has_no_edge(local):
    assert resources(local, "AWS::CloudFront::Distribution") == {}


@pytest.mark.skipif(shutil.which("node") is None, reason="Node runs the edge's function")
def test_the_edges_function_answers_any_other_path_404_in_the_apis_format():
    script = EDGE_404 + "console.log(JSON.stringify(handler({request: {uri: '/coupons/5/issues/7'}})));"
    answer = json.loads(subprocess.run(["node", "-e", script], capture_output=True, text=True, check=True).stdout)
    assert answer["statusCode"] == 404
    assert answer["headers"]["content-type"] == {"value": "application/json"}
    assert json.loads(answer["body"]["data"]) == {
        "status": "NOT_FOUND", "error": "the edge serves GET /coupons/{couponId}/availability only"
    }  # fmt: skip
