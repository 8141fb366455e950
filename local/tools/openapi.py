"""Write the OpenAPI document generated from the intake routes: ``make openapi``.

The document in ``docs/openapi.json`` is checked in; a test fails when the routes change and it
was not regenerated.
"""

from __future__ import annotations

import sys
from pathlib import Path

from functions.intake.api import app

DOCUMENT = Path(__file__).resolve().parents[2] / "docs" / "openapi.json"


def generate() -> str:
    schema = app.get_openapi_json_schema(
        title="Coupon issuing API",
        version="1.0.0",
        summary="First-come-first-served coupons: request, status, and coupon administration",
        description=(
            "Every answer has a `status` field; 4xx and 5xx answers add an `error` message. "
            "Admin routes (/coupons) are IAM-authorised in deployed environments."
        ),
    )
    return schema + "\n"


def main() -> int:
    DOCUMENT.write_text(generate(), encoding="utf-8")
    print(f"wrote {DOCUMENT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
