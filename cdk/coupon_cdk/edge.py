"""The edge cache in front of a sale's public read, ``GET /coupons/{couponId}/availability``:
a CloudFront distribution whose one route keeps each coupon's answer for a second.

However many pages poll, CloudFront answers them from its caches, and Origin Shield (one more
cache, in front of the API) lets about one request per coupon per second through to API Gateway
and the coupons function. The cache key is the path alone: the answers are under CloudFront's
1,000 bytes, which it never compresses (so no encoding in the key), and CORS is the response
headers policy's (CloudFront writes ``Access-Control-Allow-Origin`` for a listed origin on each
answer it sends, cached or not), so no ``Origin`` either. The coupons function answers the
edge's requests (``EDGE_HEADER`` with the secret, which only it may read) from a read of Redis made
for them (``routes/availability.py``): a count reaches a page at most a second after Redis held it
(expected: not measured, as LocalStack has no CloudFront), never a container's second plus the
edge's. While the API answers 5xx, CloudFront may go on serving the answer it kept; ``asOf`` says
how old it is.

A CloudFront Function (``edge_function``) runs before the cache on every request: anything but a
GET of a coupon id's availability, written as the API writes ids, is 404 at the edge and never
cached, so the distribution is no second door to the API, ``/coupons/05/...`` is no new cache
key, and a HEAD (which the API answers 404) keeps no 404 for the GETs; and the viewer's address
goes to the API in ``VIEWER_HEADER``, which the function sets on every request.

API Gateway's stage cache was not chosen: it answers from its cache only after a request has
counted against the stage's throttle, been billed and been inspected by the web ACL, so 300,000
pages polling once a second would need a throttle of 300,000 requests/s; CloudFront bills such a
poll ($0.01 per 10,000 HTTPS requests in North America and Europe) and bounds what reaches the API.

The web ACL's rate rules count every request that reaches the API: those the edge sends carry a
header (``EDGE_HEADER``) whose value is a secret of this stack, and are counted per viewer by
``VIEWER_HEADER`` instead of per IP (the edge's few addresses would otherwise be a sale's busiest,
and a script of one viewer making up ids would pass uncounted). A caller that skips the edge is
counted by its IP as before.
"""

from __future__ import annotations

import json

from aws_cdk import CfnOutput, Duration
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_cloudfront as cloudfront
from aws_cdk import aws_cloudfront_origins as origins
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from coupon_cdk.api import CORS_EXPOSED
from coupon_cdk.nag import EDGE_SECRET, accept
from coupon_core.domain.availability import AVAILABILITY_MS
from functions.http_api.request import EDGE_HEADER

VIEWER_HEADER = "x-coupon-viewer"
EDGE_PATH = "/coupons/*/availability"  # the route, as a CloudFront path pattern
CACHE_S = AVAILABILITY_MS // 1000  # the availability's own period: its answers' s-maxage
# CloudFront's Origin Shield Regions (Developer Guide, "Choosing the AWS Region for Origin Shield"),
# and the one to use for an API in a Region without one; another Region stops the synth.
SHIELD_REGIONS = frozenset({
    "us-east-1", "us-east-2", "us-west-2", "ap-south-1", "ap-northeast-1", "ap-northeast-2", "ap-southeast-1",
    "ap-southeast-2", "eu-central-1", "eu-west-1", "eu-west-2", "sa-east-1",
})  # fmt: skip
NEAREST_SHIELD = {"us-west-1": "us-west-2", "ca-central-1": "us-east-1", "eu-west-3": "eu-west-2",
                  "ap-northeast-3": "ap-northeast-1"}  # fmt: skip
_NOT_HERE = json.dumps({"status": "NOT_FOUND", "error": "the edge serves GET /coupons/{couponId}/availability only"})
# Errors the edge keeps for less than CloudFront's default 10 s: a 404 and an outage of the API
# as long as an answer (so an outage reaches the API once a second, not once a poll); the web
# ACL's refusal not at all (it is one viewer's, and the cache key is not).
ERROR_TTL_S = {404: CACHE_S, 403: 0, 500: CACHE_S, 502: CACHE_S, 503: CACHE_S, 504: CACHE_S}


def edge_function() -> str:
    """The viewer-request function (CloudFront's JavaScript 2.0)."""
    return f"""var AVAILABILITY = /^\\/coupons\\/[1-9][0-9]{{0,18}}\\/availability$/;
function handler(event) {{
  var request = event.request;
  if (request.method !== 'GET' || !AVAILABILITY.test(request.uri)) {{
    return {{statusCode: 404, statusDescription: 'Not Found',
      headers: {{'content-type': {{value: 'application/json'}}, 'cache-control': {{value: 'public, max-age=60'}}}},
      body: {{encoding: 'text', data: {json.dumps(_NOT_HERE)}}}}};
  }}
  request.headers['{VIEWER_HEADER}'] = {{value: event.viewer.ip}};
  request.querystring = {{}};
  return request;
}}
"""


def shield_region(region: str) -> str:
    """The Origin Shield Region for an API in ``region``."""
    if region in SHIELD_REGIONS:
        return region
    if region in NEAREST_SHIELD:
        return NEAREST_SHIELD[region]
    raise ValueError(f"no Origin Shield Region known for {region}: add the nearest to NEAREST_SHIELD in edge.py")


class SaleEdge(Construct):
    """The distribution in front of ``rest_api``'s stage (in ``region``), for pages from ``listed``."""

    def __init__(
        self, scope: Construct, construct_id: str, *, rest_api: apigw.RestApi, region: str, listed: list[str]
    ) -> None:
        super().__init__(scope, construct_id)
        self.secret = secretsmanager.Secret(
            self,
            "HeaderSecret",
            description="the value of the edge's header, by which the web ACL counts the edge's requests per viewer",
            generate_secret_string=secretsmanager.SecretStringGenerator(exclude_punctuation=True, password_length=32),
        )
        accept(self.secret, "AwsSolutions-SMG4", reason=EDGE_SECRET)
        self.header_value = self.secret.secret_value.unsafe_unwrap()  # a dynamic reference, resolved by CloudFormation
        api = origins.RestApiOrigin(
            rest_api,
            custom_headers={EDGE_HEADER: self.header_value},
            origin_shield_region=shield_region(region),
            read_timeout=Duration.seconds(10),
        )
        cache = cloudfront.CachePolicy(
            self,
            "Availability",
            comment="one answer per coupon, kept a second",
            min_ttl=Duration.seconds(0),
            default_ttl=Duration.seconds(CACHE_S),
            max_ttl=Duration.seconds(CACHE_S),
            header_behavior=cloudfront.CacheHeaderBehavior.none(),
            query_string_behavior=cloudfront.CacheQueryStringBehavior.none(),
            cookie_behavior=cloudfront.CacheCookieBehavior.none(),
            enable_accept_encoding_gzip=False,
            enable_accept_encoding_brotli=False,
        )
        cors = (
            None
            if not listed
            else cloudfront.ResponseHeadersPolicy(
                self,
                "Cors",
                comment="the listed pages read a sale's availability",
                cors_behavior=cloudfront.ResponseHeadersCorsBehavior(
                    access_control_allow_origins=listed,
                    access_control_allow_methods=["GET", "HEAD"],
                    # a preflight's answer, which never comes: a GET without headers is not preflighted,
                    # and the edge's function answers OPTIONS 404; CloudFormation asks for one item
                    access_control_allow_headers=["*"],
                    access_control_expose_headers=CORS_EXPOSED,
                    access_control_allow_credentials=False,
                    origin_override=True,
                ),
            )
        )
        viewer = cloudfront.OriginRequestPolicy(
            self,
            "Viewer",
            comment="the viewer's address, for the web ACL's count; not in the cache key",
            header_behavior=cloudfront.OriginRequestHeaderBehavior.allow_list(VIEWER_HEADER),
            query_string_behavior=cloudfront.OriginRequestQueryStringBehavior.none(),
            cookie_behavior=cloudfront.OriginRequestCookieBehavior.none(),
        )
        before_the_cache = [
            cloudfront.FunctionAssociation(
                function=cloudfront.Function(
                    self,
                    "Refuse",
                    comment="404 but for a coupon's availability; the viewer's address",
                    code=cloudfront.FunctionCode.from_inline(edge_function()),
                    runtime=cloudfront.FunctionRuntime.JS_2_0,
                ),
                event_type=cloudfront.FunctionEventType.VIEWER_REQUEST,
            )
        ]
        self.distribution = cloudfront.Distribution(
            self,
            "Distribution",
            comment="a sale's availability, cached a second",
            default_behavior=cloudfront.BehaviorOptions(
                origin=api,
                cache_policy=cloudfront.CachePolicy.CACHING_DISABLED,
                viewer_protocol_policy=cloudfront.ViewerProtocolPolicy.HTTPS_ONLY,
                function_associations=before_the_cache,
            ),
            additional_behaviors={
                EDGE_PATH: cloudfront.BehaviorOptions(
                    origin=api,
                    cache_policy=cache,
                    origin_request_policy=viewer,
                    response_headers_policy=cors,
                    compress=False,
                    viewer_protocol_policy=cloudfront.ViewerProtocolPolicy.HTTPS_ONLY,
                    allowed_methods=cloudfront.AllowedMethods.ALLOW_GET_HEAD,
                    function_associations=before_the_cache,
                )
            },
            error_responses=[
                cloudfront.ErrorResponse(http_status=status, ttl=Duration.seconds(ttl))
                for status, ttl in ERROR_TTL_S.items()
            ],
            http_version=cloudfront.HttpVersion.HTTP2_AND_3,
        )
        accept(self.distribution, "AwsSolutions-CFR1", "AwsSolutions-CFR2", "AwsSolutions-CFR3", "AwsSolutions-CFR4")
        CfnOutput(self, "AvailabilityUrl", value=f"https://{self.distribution.distribution_domain_name}", key="EdgeUrl")
