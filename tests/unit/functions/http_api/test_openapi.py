"""The checked-in OpenAPI document matches the routes, and docs/design.md's API table the document."""

from __future__ import annotations

import json

from local.tools.openapi import DESIGN, DOCUMENT, api_table, generate, with_table


def test_the_checked_in_document_is_current():
    assert DOCUMENT.read_text(encoding="utf-8") == generate(), "routes changed: run make openapi"


def test_the_designs_api_table_lists_every_route_and_answer_of_the_document():
    design = DESIGN.read_text(encoding="utf-8")
    document = json.loads(DOCUMENT.read_text(encoding="utf-8"))
    assert design == with_table(design, document), "docs/openapi.json changed: run make openapi"
    table = api_table(document)
    (shared,) = [line for line in table.splitlines() if line.startswith("| every route but `POST /coupon-issues`")]
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            (row,) = [line for line in table.splitlines() if line.startswith(f"| `{method.upper()} {path}`")]
            given = row if path == "/coupon-issues" else row + shared
            assert all(f"{code} {answer['description']}" in given for code, answer in operation["responses"].items())


def test_every_route_is_documented_with_our_error_body():
    paths = json.loads(generate())["paths"]
    assert set(paths) == {
        "/coupon-issues",
        "/coupons/{couponId}/issues/{userId}",
        "/coupons/{couponId}/issues/{userId}/use",
        "/coupons/{couponId}/issues/{userId}/cancel",
        "/coupons",
        "/coupons/{couponId}",
        "/coupons/{couponId}/close",
        "/coupons/{couponId}/reopen",
        "/coupons/{couponId}/top-up",
        "/coupons/{couponId}/reconcile",
        "/coupons/{couponId}/issues",
        "/coupons/{couponId}/availability",
    }
    assert set(paths["/coupons/{couponId}"]) == {"get", "patch"}
    assert set(paths["/coupons"]) == {"get", "post"}
    use = paths["/coupons/{couponId}/issues/{userId}/use"]["post"]["responses"]
    assert set(use) == {"200", "403", "404", "409", "415", "422", "503"}
    issue = paths["/coupon-issues"]["post"]["responses"]
    assert set(issue) == {"202", "403", "404", "409", "415", "422", "503"}
    assert issue["415"]["description"].startswith("UNSUPPORTED_MEDIA_TYPE")
    assert issue["422"]["content"]["application/json"]["schema"]["$ref"] == "#/components/schemas/ErrorBody"


def test_the_csv_export_and_the_claims_modes_refusal_are_documented():
    paths = json.loads(generate())["paths"]
    export = paths["/coupons/{couponId}/issues"]["get"]["responses"]["200"]
    assert set(export["content"]) == {"application/json", "text/csv"}
    assert set(export["headers"]) == {"X-Next-After"}
    for path, method in (
        ("/coupons/{couponId}/issues/{userId}", "get"),
        ("/coupon-issues", "post"),
        ("/coupons/{couponId}/issues/{userId}/use", "post"),
        ("/coupons/{couponId}/issues/{userId}/cancel", "post"),
    ):
        assert paths[path][method]["responses"]["403"]["description"].startswith("FORBIDDEN"), path
