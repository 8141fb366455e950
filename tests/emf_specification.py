"""AWS's embedded metric format (EMF) specification, as a checker of a metrics line: its document
structure as a JSON Schema, and its target-member rules (what the directives name is on the root)
in code. From docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/
CloudWatch_Embedded_Metric_Format_Specification.html: a root object with ``_aws``, whose
``Timestamp`` (ms since the epoch) and ``CloudWatchMetrics`` (metric directives) are required; a
directive names a ``Namespace``, its ``Dimensions`` (dimension sets of at most 30 keys) and its
``Metrics`` (at most 100 definitions: a ``Name``, an optional ``Unit`` of CloudWatch's, an
optional ``StorageResolution`` of 1 or 60); every dimension key is a root member with a string
value, every metric name a root member with a number or an array of at most 100 numbers.
"""

from __future__ import annotations

import json
from typing import Any

from jsonschema import Draft7Validator

UNITS = [
    "Seconds", "Microseconds", "Milliseconds", "Bytes", "Kilobytes", "Megabytes", "Gigabytes", "Terabytes",
    "Bits", "Kilobits", "Megabits", "Gigabits", "Terabits", "Percent", "Count", "Bytes/Second",
    "Kilobytes/Second", "Megabytes/Second", "Gigabytes/Second", "Terabytes/Second", "Bits/Second",
    "Kilobits/Second", "Megabits/Second", "Gigabits/Second", "Terabits/Second", "Count/Second", "None",
]  # fmt: skip

_DIRECTIVE = {
    "type": "object",
    "required": ["Namespace", "Dimensions", "Metrics"],
    "properties": {
        "Namespace": {"type": "string", "minLength": 1, "maxLength": 1024},
        "Dimensions": {
            "type": "array",
            "items": {"type": "array", "maxItems": 30, "items": {"type": "string", "minLength": 1}},
        },
        "Metrics": {
            "type": "array",
            "maxItems": 100,
            "items": {
                "type": "object",
                "required": ["Name"],
                "properties": {
                    "Name": {"type": "string", "minLength": 1, "maxLength": 1024},
                    "Unit": {"enum": UNITS},
                    "StorageResolution": {"enum": [1, 60]},
                },
            },
        },
    },
}
SCHEMA = {
    "type": "object",
    "required": ["_aws"],
    "properties": {
        "_aws": {
            "type": "object",
            "required": ["Timestamp", "CloudWatchMetrics"],
            "properties": {
                "Timestamp": {"type": "integer", "minimum": 0},
                "CloudWatchMetrics": {"type": "array", "items": _DIRECTIVE},
            },
        }
    },
}


def problems(line: str) -> list[str]:
    """Every way ``line`` breaks the specification (none: a valid EMF document)."""
    try:
        document: Any = json.loads(line)
    except ValueError as exc:
        return [f"not one JSON document: {exc}"]
    found = [error.message for error in Draft7Validator(SCHEMA).iter_errors(document)]
    if found:
        return found
    for directive in document["_aws"]["CloudWatchMetrics"]:
        for key in {key for dimension_set in directive["Dimensions"] for key in dimension_set}:
            if not isinstance(document.get(key), str):
                found.append(f"dimension {key!r} is not a root member with a string value")
        for definition in directive["Metrics"]:
            value = document.get(definition["Name"])
            values = value if isinstance(value, list) else [value]
            numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
            if not numbers or not 1 <= len(values) <= 100:
                found.append(f"metric {definition['Name']!r} is not a root member with a number or up to 100")
    return found
