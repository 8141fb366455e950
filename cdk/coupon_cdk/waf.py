"""A WAF web ACL in front of the API stage: rate limits per IP and per signed-in caller, two of
AWS's managed rule groups, and AWS WAF Bot Control where an environment asks for it.

Stage throttling caps the whole API; the per-IP rule stops one address from taking a sale for
itself (the edge's requests counted per viewer instead, by the address the edge writes:
``coupon_cdk/edge.py``), and the per-caller rule one account, whatever the addresses its script
rotates through (a rate-based rule aggregated on the ``Authorization`` header: each token is a
caller; a request without one is not counted by it). The common rule set and the
known-bad-inputs set (request patterns of known exploits, Log4j's JNDI lookups among them) drop
well-known bad requests before they cost an intake invocation. Bot Control labels and blocks
bots on ``POST /coupon-issues`` only (it is billed per request it inspects). Together they use
about 1,020 of the web ACL's 1,500 capacity units (about 4, 34 and 32 for the rate rules with
their header keys and matches, 700 and 200 for the rule sets, 50 for Bot Control).
"""

from __future__ import annotations

from typing import Literal

from aws_cdk import aws_wafv2 as wafv2
from constructs import Construct

ISSUE_PATH = "/coupon-issues"
AS_SENT = [wafv2.CfnWebACL.TextTransformationProperty(priority=0, type="NONE")]  # a field matched untransformed


def _visibility(name: str) -> wafv2.CfnWebACL.VisibilityConfigProperty:
    return wafv2.CfnWebACL.VisibilityConfigProperty(
        cloud_watch_metrics_enabled=True, metric_name=name, sampled_requests_enabled=True
    )


def _managed_rules(
    name: str,
    priority: int,
    rule_group: str,
    metric: str,
    *,
    configs: list[wafv2.CfnWebACL.ManagedRuleGroupConfigProperty] | None = None,
    scope_down: wafv2.CfnWebACL.StatementProperty | None = None,
) -> wafv2.CfnWebACL.RuleProperty:
    """One of AWS's managed rule groups, with its own actions (no override)."""
    return wafv2.CfnWebACL.RuleProperty(
        name=name,
        priority=priority,
        override_action=wafv2.CfnWebACL.OverrideActionProperty(none={}),
        statement=wafv2.CfnWebACL.StatementProperty(
            managed_rule_group_statement=wafv2.CfnWebACL.ManagedRuleGroupStatementProperty(
                vendor_name="AWS", name=rule_group, managed_rule_group_configs=configs, scope_down_statement=scope_down
            )
        ),
        visibility_config=_visibility(metric),
    )


def _rate(
    name: str,
    priority: int,
    limit: int,
    metric: str,
    *,
    keys: list[wafv2.CfnWebACL.RateBasedStatementCustomKeyProperty],
    scope_down: wafv2.CfnWebACL.StatementProperty | None = None,
) -> wafv2.CfnWebACL.RuleProperty:
    """A rate-based rule over five minutes: by IP without ``keys``, else by those keys; of the
    requests ``scope_down`` matches, if given."""
    return wafv2.CfnWebACL.RuleProperty(
        name=name,
        priority=priority,
        action=wafv2.CfnWebACL.RuleActionProperty(block={}),
        statement=wafv2.CfnWebACL.StatementProperty(
            rate_based_statement=wafv2.CfnWebACL.RateBasedStatementProperty(
                limit=limit,
                aggregate_key_type="CUSTOM_KEYS" if keys else "IP",
                custom_keys=keys or None,
                evaluation_window_sec=300,
                scope_down_statement=scope_down,
            )
        ),
        visibility_config=_visibility(metric),
    )


def _per(header: str) -> wafv2.CfnWebACL.RateBasedStatementCustomKeyProperty:
    """A rate-based rule's key: each value of ``header``, as sent (a request without it is not counted)."""
    return wafv2.CfnWebACL.RateBasedStatementCustomKeyProperty(
        header=wafv2.CfnWebACL.RateLimitHeaderProperty(name=header, text_transformations=AS_SENT)
    )


def _from(header: tuple[str, str]) -> wafv2.CfnWebACL.StatementProperty:
    """Requests with the header ``(name, value)`` (the edge's: ``coupon_cdk/edge.py``)."""
    name, value = header
    return wafv2.CfnWebACL.StatementProperty(
        byte_match_statement=wafv2.CfnWebACL.ByteMatchStatementProperty(
            field_to_match=wafv2.CfnWebACL.FieldToMatchProperty(single_header={"Name": name.lower()}),
            positional_constraint="EXACTLY",
            search_string=value,
            text_transformations=AS_SENT,
        )
    )


def _not(statement: wafv2.CfnWebACL.StatementProperty) -> wafv2.CfnWebACL.StatementProperty:
    return wafv2.CfnWebACL.StatementProperty(not_statement=wafv2.CfnWebACL.NotStatementProperty(statement=statement))


def _issue_requests() -> wafv2.CfnWebACL.StatementProperty:
    """Requests whose path ends with the issue route (the stage's name may come before it)."""
    return wafv2.CfnWebACL.StatementProperty(
        byte_match_statement=wafv2.CfnWebACL.ByteMatchStatementProperty(
            field_to_match=wafv2.CfnWebACL.FieldToMatchProperty(uri_path={}),
            positional_constraint="ENDS_WITH",
            search_string=ISSUE_PATH,
            text_transformations=AS_SENT,
        )
    )


class ApiFirewall(Construct):
    """``requests_per_5_min`` per IP, and for the requests carrying ``edge_header`` (its name and
    value: the edge's, whose few addresses would be a sale's busiest) per viewer, by the address
    the edge writes in ``viewer_header``; ``requests_per_5_min_per_caller`` per token (0: no such
    rule); ``bot_control``: Bot Control's inspection level, or ``off``."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        stage_arn: str,
        requests_per_5_min: int,
        requests_per_5_min_per_caller: int,
        bot_control: Literal["off", "common", "targeted"],
        edge_header: tuple[str, str],
        viewer_header: str,
    ) -> None:
        super().__init__(scope, construct_id)
        rules = [
            _rate(
                "RatePerIp",
                0,
                requests_per_5_min,
                "coupon-api-rate-per-ip",
                keys=[],
                scope_down=_not(_from(edge_header)),
            ),
            _rate(
                "RatePerViewer",
                5,
                requests_per_5_min,
                "coupon-api-rate-per-viewer",
                keys=[_per(viewer_header)],
                scope_down=_from(edge_header),
            ),
            _managed_rules("AwsCommonRules", 1, "AWSManagedRulesCommonRuleSet", "coupon-api-common-rules"),
            _managed_rules(
                "AwsKnownBadInputs", 2, "AWSManagedRulesKnownBadInputsRuleSet", "coupon-api-known-bad-inputs"
            ),
        ]
        if requests_per_5_min_per_caller:
            rules.append(
                _rate(
                    "RatePerCaller",
                    3,
                    requests_per_5_min_per_caller,
                    "coupon-api-rate-per-caller",
                    keys=[_per("authorization")],
                )
            )
        if bot_control != "off":
            level = wafv2.CfnWebACL.AWSManagedRulesBotControlRuleSetProperty(inspection_level=bot_control.upper())
            rules.append(
                _managed_rules(
                    "AwsBotControl",
                    4,
                    "AWSManagedRulesBotControlRuleSet",
                    "coupon-api-bot-control",
                    configs=[
                        wafv2.CfnWebACL.ManagedRuleGroupConfigProperty(aws_managed_rules_bot_control_rule_set=level)
                    ],
                    scope_down=_issue_requests(),
                )
            )
        self.acl = wafv2.CfnWebACL(
            self,
            "Acl",
            scope="REGIONAL",
            default_action=wafv2.CfnWebACL.DefaultActionProperty(allow={}),
            visibility_config=_visibility("coupon-api"),
            rules=rules,
        )
        wafv2.CfnWebACLAssociation(self, "Association", resource_arn=stage_arn, web_acl_arn=self.acl.attr_arn)
