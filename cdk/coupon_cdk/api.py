"""API Gateway (REST): the routes of docs/design.md (HTTP API) in front of the two HTTP
functions: ``POST /coupon-issues`` to the intake, every other route to the coupons function.

CORS, for the environment's ``api.corsOrigins``: API Gateway answers the preflight of each route
a shopper's page calls (the issue request, its status, use and cancel of one's copy) itself,
with no function invoked; the functions add the headers to their own answers for an origin on
the list (``functions/http_api/request.py``); and API Gateway's own refusals echo the request's
``Origin`` (a gateway response cannot pick from a list, and nothing sets
``Access-Control-Allow-Credentials``, so any page may read a refusal: it tells nothing private).

API Gateway's own refusals are in the API's format, ``{"status": ..., "error": ...}``. Their
templates are not Velocity: API Gateway substitutes variables and nothing else, so a value that
may hold a quote is written only as ``$context.error.messageString``, which API Gateway quotes
itself (docs: "The quoted value of $context.error.message"); tests/infra/test_gateway_responses.py
renders every template of every environment."""

from __future__ import annotations

from typing import Any, NamedTuple

from aws_cdk import CfnOutput, Duration
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_cognito as cognito
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from coupon_cdk.config import ApiConfig
from coupon_cdk.nag import AVAILABILITY, PREFLIGHT, accept
from coupon_cdk.request_models import gateway_schema
from functions.http_api.schemas import ChangeCouponRequest, CreateCouponRequest, TopUpRequest
from functions.intake.request import METHOD as ISSUE_METHOD
from functions.intake.request import PATH as ISSUE_PATH
from functions.intake.request import IssueRequest

# What a page may send on the public routes, how long a browser keeps a preflight's answer
# (Chromium's cap: 2 hours), and the header beyond the safelisted ones it must read.
CORS_HEADERS = ["Content-Type", "Idempotency-Key", "Authorization"]
CORS_MAX_AGE = Duration.hours(2)
CORS_EXPOSED = ["Retry-After"]


class GatewayError(NamedTuple):
    """One of API Gateway's own refusals in the API's format: its construct id, its HTTP status
    (None: the gateway's own), the body's status, and its error as a JSON value (API Gateway's
    quoted message, or a literal string).

    Construct ids never change: CloudFormation deletes a renamed gateway response after it has
    made its replacement, and that delete resets the type to API Gateway's default."""

    construct_id: str
    status_code: str | None
    status: str
    error: str


MESSAGE = "$context.error.messageString"
GATEWAY_ERRORS: dict[apigw.ResponseType, GatewayError] = {
    # The edge's validation: its detail ($context.error.validationErrorString) is not quoted, and a
    # template cannot escape it, so the error names the schema instead.
    apigw.ResponseType.BAD_REQUEST_BODY: GatewayError(
        "GatewayINVALID_REQUEST422",
        "422",
        "INVALID_REQUEST",
        '"the body does not match the request\'s schema (docs/openapi.json)"',
    ),
    apigw.ResponseType.ACCESS_DENIED: GatewayError("GatewayFORBIDDEN403", "403", "FORBIDDEN", MESSAGE),
    apigw.ResponseType.WAF_FILTERED: GatewayError("GatewayFORBIDDEN403Waf", "403", "FORBIDDEN", MESSAGE),
    apigw.ResponseType.UNAUTHORIZED: GatewayError("GatewayUNAUTHORIZED401", "401", "UNAUTHORIZED", MESSAGE),
    apigw.ResponseType.MISSING_AUTHENTICATION_TOKEN: GatewayError(
        "GatewayNOT_FOUND404", "404", "NOT_FOUND", '"no such route or method"'
    ),
    apigw.ResponseType.THROTTLED: GatewayError(
        "GatewayTHROTTLED429", "429", "THROTTLED", '"too many requests, retry later"'
    ),
    # The authorizer could not be asked: no function ran, nothing was reserved.
    apigw.ResponseType.AUTHORIZER_FAILURE: GatewayError("GatewayAuthorizerFailure", "503", "UNAVAILABLE", MESSAGE),
    apigw.ResponseType.AUTHORIZER_CONFIGURATION_ERROR: GatewayError(
        "GatewayAuthorizerConfiguration", "503", "UNAVAILABLE", MESSAGE
    ),
    # Any other 4xx of the gateway's (a body too large, a signature expired, ...): its own status,
    # and its type as the body's status (REQUEST_TOO_LARGE, EXPIRED_TOKEN, ...).
    apigw.ResponseType.DEFAULT_4_XX: GatewayError("GatewayOther4xx", None, "$context.error.responseType", MESSAGE),
    # Any other 5xx: the function failed, timed out or gave no answer the gateway could read,
    # perhaps after its reservation: a lost answer, which a client settles on the status route.
    apigw.ResponseType.DEFAULT_5_XX: GatewayError("GatewayUNAVAILABLE503", "503", "UNCONFIRMED", MESSAGE),
}
RETRY_AFTER_STATUSES = ("429", "503")


class Api(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: ApiConfig,
        stage: str,
        intake: lambda_.IFunction,
        coupons: lambda_.IFunction,
        log_retention: logs.RetentionDays,
        edge_validation: bool = True,
    ) -> None:
        """``edge_validation`` checks bodies against JSON schemas in API Gateway, before the
        function runs; off locally, where LocalStack ignores the gateway response templates
        that put its refusals in our format (the function validates in every environment)."""
        super().__init__(scope, construct_id)
        self.access_logs = access_logs = logs.LogGroup(self, "AccessLogs", retention=log_retention)
        self.rest_api = apigw.RestApi(
            self,
            "Api",
            description="Coupon issuing API",
            # The account's CloudWatch role is one per region: ApiGatewayAccountStack owns it, so
            # two environments in one region do not fight over it.
            cloud_watch_role=False,
            deploy_options=apigw.StageOptions(
                stage_name=stage,
                throttling_rate_limit=config.rate_limit,
                throttling_burst_limit=config.burst_limit,
                access_log_destination=apigw.LogGroupLogDestination(access_logs),
                access_log_format=apigw.AccessLogFormat.json_with_standard_fields(
                    caller=True,
                    http_method=True,
                    ip=True,
                    protocol=True,
                    request_time=True,
                    resource_path=True,
                    response_length=True,
                    status=True,
                    user=True,
                ),
                logging_level=apigw.MethodLoggingLevel.ERROR,
                metrics_enabled=True,
                tracing_enabled=True,
            ),
        )
        accept(self.rest_api, "AwsSolutions-COG4")
        if not config.waf_requests_per_5_min:
            accept(self.rest_api, "AwsSolutions-APIG3")
        origins = list(config.cors_origins)
        self._gateway_responses(origins)
        integration = apigw.LambdaIntegration(coupons)
        public_auth = self._public_authorization(config)
        # add_method's keyword arguments, per route: who may call it, and what the edge validates
        iam_auth: dict[str, Any] = {"authorization_type": apigw.AuthorizationType.IAM}
        issue_body: dict[str, Any] = {}
        coupon_body: dict[str, Any] = {}
        change_body: dict[str, Any] = {}
        top_up_body: dict[str, Any] = {}
        params: dict[str, Any] = {}
        if not edge_validation:
            accept(self.rest_api, "AwsSolutions-APIG2")
        else:
            body_validator = self.rest_api.add_request_validator(
                "Body", validate_request_body=True, validate_request_parameters=True
            )
            issue_model = self.rest_api.add_model(
                "IssueRequest", content_type="application/json", schema=gateway_schema(IssueRequest)
            )
            coupon_model = self.rest_api.add_model(
                "CreateCoupon", content_type="application/json", schema=gateway_schema(CreateCouponRequest)
            )
            issue_body = {"request_validator": body_validator, "request_models": {"application/json": issue_model}}
            coupon_body = {"request_validator": body_validator, "request_models": {"application/json": coupon_model}}
            change_model = self.rest_api.add_model(
                "ChangeCoupon", content_type="application/json", schema=gateway_schema(ChangeCouponRequest)
            )
            top_up_model = self.rest_api.add_model(
                "TopUp", content_type="application/json", schema=gateway_schema(TopUpRequest)
            )
            change_body = {"request_validator": body_validator, "request_models": {"application/json": change_model}}
            top_up_body = {"request_validator": body_validator, "request_models": {"application/json": top_up_model}}
            params = {
                "request_validator": self.rest_api.add_request_validator("Params", validate_request_parameters=True)
            }

        issues = self.rest_api.root.add_resource(ISSUE_PATH.strip("/"))
        issues.add_method(ISSUE_METHOD, apigw.LambdaIntegration(intake), **issue_body, **public_auth)
        every_coupon = self.rest_api.root.add_resource("coupons")
        every_coupon.add_method("POST", integration, **coupon_body, **iam_auth)
        every_coupon.add_method("GET", integration, **params, **iam_auth)  # the operators' routes below
        coupon = every_coupon.add_resource("{couponId}")
        coupon.add_method("GET", integration, **params, **iam_auth)
        coupon.add_method("PATCH", integration, **change_body, **iam_auth)
        for action, body in (("close", params), ("reopen", params), ("top-up", top_up_body), ("reconcile", params)):
            coupon.add_resource(action).add_method("POST", integration, **body, **iam_auth)
        _add_availability(coupon, integration, params)
        coupon_issues = coupon.add_resource("issues")
        coupon_issues.add_method("GET", integration, **params, **iam_auth)
        issue_status = coupon_issues.add_resource("{userId}")
        issue_status.add_method("GET", integration, **params, **public_auth)
        public = [(issues, ISSUE_METHOD), (issue_status, "GET")]
        for change in ("use", "cancel"):
            copy_change = issue_status.add_resource(change)
            copy_change.add_method("POST", integration, **params, **public_auth)
            public.append((copy_change, "POST"))
        for resource, method in public if origins else []:
            _answer_preflight(resource, method, origins)

    def _gateway_responses(self, origins: list[str]) -> None:
        """API Gateway's own refusals in the API's format (:data:`GATEWAY_ERRORS`), readable by
        every allowed origin."""
        for response_type, (construct_id, status_code, status, error) in GATEWAY_ERRORS.items():
            self.rest_api.add_gateway_response(
                construct_id,
                type=response_type,
                status_code=status_code,
                response_headers=_gateway_headers(origins, retry=status_code in RETRY_AFTER_STATUSES),
                templates={"application/json": f'{{"status": "{status}", "error": {error}}}'},
            )

    def _public_authorization(self, config: ApiConfig) -> dict[str, Any]:
        """Who may call the public routes: anyone (local), SigV4-signed callers of the account
        (the user id from the body), or Cognito users (the user id from their ID token)."""
        if config.public_auth == "none":
            accept(self.rest_api, "AwsSolutions-APIG4")
            return {"authorization_type": apigw.AuthorizationType.NONE}
        if config.public_auth == "iam":
            return {"authorization_type": apigw.AuthorizationType.IAM}
        claim = config.user_id_claim
        custom = (
            {claim.removeprefix("custom:"): cognito.StringAttribute(min_len=1, max_len=19, mutable=False)}
            if claim.startswith("custom:")
            else {}  # a claim added by a pre token generation trigger
        )
        pool = cognito.UserPool(
            self,
            "Users",
            self_sign_up_enabled=False,
            custom_attributes=custom or None,
            password_policy=cognito.PasswordPolicy(
                min_length=12, require_digits=True, require_lowercase=True, require_uppercase=True, require_symbols=True
            ),
            mfa=cognito.Mfa.REQUIRED,
            mfa_second_factor=cognito.MfaSecondFactor(otp=True, sms=False),
            feature_plan=cognito.FeaturePlan.PLUS,
            standard_threat_protection_mode=cognito.StandardThreatProtectionMode.FULL_FUNCTION,
        )
        # The user id is set by whoever creates the user (AdminCreateUser); the app client can
        # read it but never write it, or users could choose whose coupons they take.
        client = pool.add_client(
            "App",
            auth_flows=cognito.AuthFlow(user_srp=True),
            generate_secret=False,
            id_token_validity=Duration.hours(1),
            access_token_validity=Duration.hours(1),
            prevent_user_existence_errors=True,
            read_attributes=cognito.ClientAttributes()
            .with_standard_attributes(email=True)
            .with_custom_attributes(*custom),
            write_attributes=cognito.ClientAttributes().with_standard_attributes(email=True),
        )
        CfnOutput(self, "UserPoolId", value=pool.user_pool_id, key="UserPoolId")
        CfnOutput(self, "AppClientId", value=client.user_pool_client_id, key="AppClientId")
        authorizer = apigw.CognitoUserPoolsAuthorizer(self, "Authorizer", cognito_user_pools=[pool])
        return {"authorization_type": apigw.AuthorizationType.COGNITO, "authorizer": authorizer}


def _gateway_headers(origins: list[str], *, retry: bool) -> dict[str, str]:
    """The headers of a gateway response: with origins listed, the request's own ``Origin``
    echoed (API Gateway maps a request header into a gateway response's; a page whose origin is
    not listed never gets past the preflight to a credentialed route anyway), and a 429 or 503
    says when to retry."""
    headers = {"Retry-After": "'1'"} if retry else {}
    if origins:
        headers |= {
            "Access-Control-Allow-Origin": "method.request.header.Origin",
            "Access-Control-Expose-Headers": f"'{','.join(CORS_EXPOSED)}'",
            "Vary": "'Origin'",
        }
    return headers


def _add_availability(coupon: apigw.Resource, integration: apigw.LambdaIntegration, params: dict[str, Any]) -> None:
    """A sale's availability: public in every environment (a page reads it before its shopper
    signs in, and it tells no user's data), a simple GET that needs no preflight, cached at the
    edge on AWS (``coupon_cdk/edge.py``)."""
    method = coupon.add_resource("availability").add_method(
        "GET", integration, **params, authorization_type=apigw.AuthorizationType.NONE
    )
    accept(method, "AwsSolutions-APIG4", "AwsSolutions-COG4", reason=AVAILABILITY)


def _answer_preflight(resource: apigw.Resource, method: str, origins: list[str]) -> None:
    """API Gateway answers the preflight of ``method`` on ``resource`` itself (a mock integration)."""
    preflight = resource.add_cors_preflight(
        allow_origins=origins,
        allow_methods=[method],
        allow_headers=CORS_HEADERS,
        expose_headers=CORS_EXPOSED,
        max_age=CORS_MAX_AGE,
    )
    accept(preflight, "AwsSolutions-APIG4", "AwsSolutions-COG4", reason=PREFLIGHT)
