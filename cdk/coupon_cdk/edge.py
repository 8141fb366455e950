"""The edge cache in front of a sale's public read, ``GET /coupons/{couponId}/availability``:
a CloudFront distribution whose one route keeps each coupon's answer for a second.

However many pages poll, CloudFront answers them from its caches, and Origin Shield (one more
cache, in the API's Region, in front of the API) lets about one request per coupon per second per
page origin through to API Gateway and the coupons function. The cache key is the path and the
``Origin`` header (the answer carries ``Access-Control-Allow-Origin`` for the origin that asked),
nothing else: no query string, cookie or credential reaches the API from here. Every other path
is answered 404 at the edge by a CloudFront Function (``EDGE_404``), so the distribution is no
second door to the API.

API Gateway's stage cache was not chosen: it answers from its cache only after a request has
counted against the stage's throttle, been billed and been inspected by the web ACL, so 300,000
pages polling once a second would need a throttle of 300,000 requests/s; CloudFront bills such a
poll ($0.01 per 10,000 HTTPS requests in North America and Europe) and bounds what reaches the API.

The web ACL's rate rules still count every request that reaches the API, but for those the edge
sends: they carry a header (``EDGE_HEADER``) whose value is a secret of this stack, and the
per-IP rule does not count them (the edge's few addresses would otherwise be the busiest IPs of a
sale). A caller that skips the edge is counted as before.
"""

from __future__ import annotations

import json

from aws_cdk import CfnOutput, Duration
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_cloudfront as cloudfront
from aws_cdk import aws_cloudfront_origins as origins
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from coupon_cdk.nag import EDGE_SECRET, accept
from coupon_core.domain.availability import AVAILABILITY_MS

EDGE_HEADER = "X-Coupon-Edge"
EDGE_PATH = "/coupons/*/availability"  # the route, as a CloudFront path pattern
CACHE_S = AVAILABILITY_MS // 1000  # the availability's own period: Cache-Control max-age of its answers
# What the edge answers for any other path, without asking the API (CloudFront's JavaScript 2.0).
_NOT_HERE = json.dumps({"status": "NOT_FOUND", "error": "the edge serves GET /coupons/{couponId}/availability only"})
EDGE_404 = f"""function handler(event) {{
  return {{statusCode: 404, statusDescription: 'Not Found',
    headers: {{'content-type': {{value: 'application/json'}}, 'cache-control': {{value: 'public, max-age=60'}}}},
    body: {{encoding: 'text', data: {json.dumps(_NOT_HERE)}}}}};
}}
"""
# Errors the edge keeps for less than CloudFront's default 10 s: a 404 as long as an answer, a
# refusal or an outage of the API not at all (the page reads again a second later).
ERROR_TTL_S = {404: CACHE_S, 403: 0, 500: 0, 502: 0, 503: 0, 504: 0}


class SaleEdge(Construct):
    """The distribution in front of ``rest_api``'s stage (in the stack's Region, ``region``)."""

    def __init__(self, scope: Construct, construct_id: str, *, rest_api: apigw.RestApi, region: str) -> None:
        super().__init__(scope, construct_id)
        self.secret = secretsmanager.Secret(
            self,
            "HeaderSecret",
            description="the value of the edge's header, which the web ACL's per-IP rule does not count",
            generate_secret_string=secretsmanager.SecretStringGenerator(exclude_punctuation=True, password_length=32),
        )
        accept(self.secret, "AwsSolutions-SMG4", reason=EDGE_SECRET)
        self.header_value = self.secret.secret_value.unsafe_unwrap()  # a dynamic reference, resolved by CloudFormation
        api = origins.RestApiOrigin(
            rest_api,
            custom_headers={EDGE_HEADER: self.header_value},
            origin_shield_region=region,
            read_timeout=Duration.seconds(10),
        )
        cache = cloudfront.CachePolicy(
            self,
            "Availability",
            comment="one answer per coupon and page origin, kept a second",
            min_ttl=Duration.seconds(0),
            default_ttl=Duration.seconds(CACHE_S),
            max_ttl=Duration.seconds(CACHE_S),
            header_behavior=cloudfront.CacheHeaderBehavior.allow_list("Origin"),
            query_string_behavior=cloudfront.CacheQueryStringBehavior.none(),
            cookie_behavior=cloudfront.CacheCookieBehavior.none(),
            enable_accept_encoding_gzip=True,
            enable_accept_encoding_brotli=True,
        )
        refuse = cloudfront.Function(
            self,
            "Refuse",
            comment="404 for every path but a sale's availability",
            code=cloudfront.FunctionCode.from_inline(EDGE_404),
            runtime=cloudfront.FunctionRuntime.JS_2_0,
        )
        self.distribution = cloudfront.Distribution(
            self,
            "Distribution",
            comment="a sale's availability, cached a second",
            default_behavior=cloudfront.BehaviorOptions(
                origin=api,
                cache_policy=cloudfront.CachePolicy.CACHING_DISABLED,
                viewer_protocol_policy=cloudfront.ViewerProtocolPolicy.HTTPS_ONLY,
                function_associations=[
                    cloudfront.FunctionAssociation(
                        function=refuse, event_type=cloudfront.FunctionEventType.VIEWER_REQUEST
                    )
                ],
            ),
            additional_behaviors={
                EDGE_PATH: cloudfront.BehaviorOptions(
                    origin=api,
                    cache_policy=cache,
                    viewer_protocol_policy=cloudfront.ViewerProtocolPolicy.HTTPS_ONLY,
                    allowed_methods=cloudfront.AllowedMethods.ALLOW_GET_HEAD,
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
