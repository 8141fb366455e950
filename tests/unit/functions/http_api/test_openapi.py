"""The checked-in OpenAPI document matches the routes, and README's API table the document."""

from __future__ import annotations

import json

from local.tools.openapi import DOCUMENT, README, api_table, generate, readme_with_table


def test_the_checked_in_document_is_current():
    assert DOCUMENT.read_text(encoding="utf-8") == generate(), "routes changed: run make openapi"


def test_the_readmes_api_table_lists_every_route_and_answer_of_the_document():
    readme = README.read_text(encoding="utf-8")
    document = json.loads(DOCUMENT.read_text(encoding="utf-8"))
    assert readme == readme_with_table(readme, document), "docs/openapi.json changed: run make openapi"
    table = api_table(document)
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            (row,) = [line for line in table.splitlines() if line.startswith(f"| `{method.upper()} {path}`")]
            assert all(f"{code} " in row for code in operation["responses"]), row


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


def test_design_md_names_every_answer_of_every_route():
    """docs/design.md's HTTP table says what each answer means; every route of the document is in
    it with each status code the document gives (415, which every route answers alike, is said
    once above the table)."""
    design = (DOCUMENT.parent / "design.md").read_text(encoding="utf-8")
    table = design.split("\n## 3. HTTP API\n", 1)[1].split("\n\n| route | answers |\n", 1)[1].split("\n\n", 1)[0]
    rows = table.splitlines()[1:]
    document = json.loads(DOCUMENT.read_text(encoding="utf-8"))
    problems = []
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            route = f"{method.upper()} {path}"
            named = [row for row in rows if f"`{route}`" in row.split(" | ")[0] or f"`{route}?" in row.split(" | ")[0]]
            if len(named) != 1:
                problems.append(f"{len(named)} rows for {route}")
                continue
            answers = named[0].split(" | ", 1)[1]
            missing = [code for code in operation["responses"] if code != "415" and code not in answers]
            if missing:
                problems.append(f"the row of {route} does not say {missing}")
    assert not problems, f"design.md's HTTP table: {problems}"
