"""Write the OpenAPI document generated from the API's routes (the intake's described one, and
the coupons function's), and docs/design.md's API table generated from that document: ``make openapi``.

Both are checked in; a test fails when the routes change and they were not regenerated.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver

from functions.coupons.routes import availability, coupons, issues, lifecycle, operations
from functions.intake import openapi as intake_route

ROOT = Path(__file__).resolve().parents[2]
DOCUMENT = ROOT / "docs" / "openapi.json"
DESIGN = ROOT / "docs" / "design.md"
TABLE_START, TABLE_END = (
    "<!-- the API table: make openapi writes it from docs/openapi.json -->",
    "<!-- end of the API table -->",
)


def whole_api() -> APIGatewayRestResolver:
    """A resolver with every route of the API, for its document only: API Gateway sends
    ``POST /coupon-issues`` to the intake and every other route to the coupons function."""
    app = APIGatewayRestResolver(enable_validation=True)
    for router in (
        intake_route.router,
        availability.router,
        issues.router,
        coupons.router,
        lifecycle.router,
        operations.router,
    ):
        app.include_router(router)
    return app


def generate() -> str:
    schema = whole_api().get_openapi_json_schema(
        title="Coupon issuing API",
        version="1.0.0",
        summary="First-come-first-served coupons: request, status, and coupon administration",
        description=(
            "Every answer has a `status` field; 4xx and 5xx answers add an `error` message. "
            "The operators' routes (/coupons, but a sale's availability and a user's own copy) are "
            "IAM-authorised in deployed environments."
        ),
    )
    return schema + "\n"


def api_table(document: dict[str, Any]) -> str:
    """Every route of ``document`` with its request body and every answer, as a Markdown table
    (POST /coupon-issues first, whole, then by path); the answers the coupons function's routes
    all give alike, once, last."""
    rows = ["| route | what | answers |", "|---|---|---|"]
    routes = sorted(
        (
            (path, method, operation)
            for path, methods in document["paths"].items()
            for method, operation in methods.items()
        ),
        key=lambda route: (route[0] != "/coupon-issues", route[0], route[1]),
    )
    answers = [
        [f"{code} {response['description']}" for code, response in sorted(operation["responses"].items())]
        for _, _, operation in routes
    ]
    alike = set.intersection(*(set(each) for each in answers[1:]))
    for number, ((path, method, operation), given) in enumerate(zip(routes, answers, strict=True)):
        schema = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema", {})
        body = f" `{schema['$ref'].rsplit('/', 1)[1]}`" if "$ref" in schema else ""
        own = "; ".join(answer for answer in given if not number or answer not in alike)
        rows.append(f"| `{method.upper()} {path}`{body} | {operation['summary']} | {own} |")
    shared = "; ".join(answer for answer in answers[1] if answer in alike)
    rows.append(f"| every route but `POST /coupon-issues` | also | {shared} |")
    return "\n".join(rows)


def with_table(text: str, document: dict[str, Any]) -> str:
    """``text`` with the API table between its markers generated from ``document``."""
    before, rest = text.split(TABLE_START, 1)
    _, after = rest.split(TABLE_END, 1)
    return f"{before}{TABLE_START}\n{api_table(document)}\n{TABLE_END}{after}"


def main() -> int:
    document = generate()
    DOCUMENT.write_text(document, encoding="utf-8")
    DESIGN.write_text(with_table(DESIGN.read_text(encoding="utf-8"), json.loads(document)), encoding="utf-8")
    print(f"wrote {DOCUMENT} and the API table of {DESIGN}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
