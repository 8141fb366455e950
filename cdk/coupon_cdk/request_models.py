"""The API Gateway request models, generated from the pydantic models the functions validate the
same bodies with (``functions/http_api/schemas.py``): one schema per body, so that the edge and the
function cannot disagree on what is well-formed.

API Gateway reads JSON Schema draft 4; pydantic writes draft 2020-12. For these models the two
differ only in what is not validation (``title``, ``default``), which is left out, and in the
version, which is draft 4's. What the edge cannot check, the function refuses, as it refuses
everything the edge lets through: a rule a model checks in code (a model validator;
``json_schema_extra`` states it in the schema where draft 4 can), a ``date-time`` format (API
Gateway does not check formats), and a bound past 2^53, which CDK carries as the nearest double
(its numbers are JavaScript's: the ids' 2^63 - 1 reaches the template as 2^63).
The hand-written models these replace refused ``null`` where the functions accept it
(``userId``, ``validDays``, ``validUntil``, a change's fields).
"""

from __future__ import annotations

from typing import Any

from aws_cdk import aws_apigateway as apigw
from pydantic import BaseModel

NOT_VALIDATION = frozenset({"title", "default"})
_NAMES = {  # JSON Schema keyword -> apigw.JsonSchema's argument, for the keywords the models use
    "type": "type",
    "properties": "properties",
    "required": "required",
    "additionalProperties": "additional_properties",
    "anyOf": "any_of",
    "minimum": "minimum",
    "maximum": "maximum",
    "minLength": "min_length",
    "maxLength": "max_length",
    "minProperties": "min_properties",
    "format": "format",
    "description": "description",
    "enum": "enum",
    "pattern": "pattern",
}


def draft4(model: type[BaseModel]) -> dict[str, Any]:
    """``model``'s JSON schema as the gateway validates with it (draft 4, nothing but validation
    and descriptions)."""
    return {"$schema": "http://json-schema.org/draft-04/schema#", **_validation(model.model_json_schema())}


def gateway_schema(model: type[BaseModel]) -> apigw.JsonSchema:
    """:func:`draft4` of ``model`` as CDK's ``JsonSchema``; a keyword this module does not know
    fails the synth, naming it (a model grew a constraint the gateway would silently drop)."""
    return _json_schema(_validation(model.model_json_schema()), top=True)


def _validation(schema: dict[str, Any]) -> dict[str, Any]:
    kept: dict[str, Any] = {}
    for keyword, value in schema.items():
        if keyword in NOT_VALIDATION:
            continue
        if keyword == "properties":
            kept[keyword] = {name: _validation(sub) for name, sub in value.items()}
        elif keyword == "anyOf":
            kept[keyword] = [_validation(sub) for sub in value]
        else:
            kept[keyword] = value
    return kept


def _json_schema(schema: dict[str, Any], *, top: bool = False) -> apigw.JsonSchema:
    unknown = sorted(set(schema) - set(_NAMES))
    if unknown:
        raise ValueError(f"request model keywords the gateway model does not carry: {unknown}")
    arguments: dict[str, Any] = {"schema": apigw.JsonSchemaVersion.DRAFT4} if top else {}
    for keyword, value in schema.items():
        arguments[_NAMES[keyword]] = _converted(keyword, value)
    return apigw.JsonSchema(**arguments)


def _converted(keyword: str, value: Any) -> Any:
    if keyword == "type":
        return apigw.JsonSchemaType[value.upper()]
    if keyword == "properties":
        return {name: _json_schema(sub) for name, sub in value.items()}
    if keyword == "anyOf":
        return [_json_schema(sub) for sub in value]
    return value
