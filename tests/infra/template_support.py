"""Reading a synthesized template: functions, their roles' statements, resources by type."""

from __future__ import annotations

import json
from typing import Any

from aws_cdk.assertions import Template


def resources(template: Template, kind: str) -> dict[str, dict[str, Any]]:
    return template.find_resources(kind)


def function_id(template: Template, name: str) -> str:
    """The logical id of the function whose Powertools service is ``coupon-<name>``."""
    matches = [
        logical_id
        for logical_id, resource in resources(template, "AWS::Lambda::Function").items()
        if resource["Properties"].get("Environment", {}).get("Variables", {}).get("POWERTOOLS_SERVICE_NAME")
        == f"coupon-{name}"
    ]
    assert len(matches) == 1, (name, matches)
    return matches[0]


def statements(template: Template, name: str) -> list[dict[str, Any]]:
    """Every statement of the policies attached to the function's role."""
    function = resources(template, "AWS::Lambda::Function")[function_id(template, name)]
    role_id = function["Properties"]["Role"]["Fn::GetAtt"][0]
    found = []
    for policy in resources(template, "AWS::IAM::Policy").values():
        if {"Ref": role_id} in policy["Properties"]["Roles"]:
            found.extend(policy["Properties"]["PolicyDocument"]["Statement"])
    return found


def actions(template: Template, name: str) -> set[str]:
    found: set[str] = set()
    for statement in statements(template, name):
        listed = statement["Action"]
        found.update([listed] if isinstance(listed, str) else listed)
    return found


def resources_of(template: Template, name: str, action: str) -> list[str]:
    """The resources a function's role may use ``action`` on, as JSON text (tokens included)."""
    found = []
    for statement in statements(template, name):
        listed = statement["Action"]
        if action in ([listed] if isinstance(listed, str) else listed):
            targets = statement["Resource"]
            found.extend(json.dumps(t) for t in (targets if isinstance(targets, list) else [targets]))
    return found
