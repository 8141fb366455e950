"""The OpenAPI descriptions of a route's answers: its success model, and the error body of each
refusal, for both functions' routes (docs/openapi.json is generated from them)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from functions.http_api.schemas import ErrorBody

# A route that acts for a user, in claims mode (prod): the token carries no user, or another one.
FORBIDDEN = "FORBIDDEN (USER_ID_SOURCE=claims): the token carries no numeric user id, or userId is another user's"


def documented(
    success: tuple[int, str, type[BaseModel]],
    errors: dict[int, str] | None = None,
    *,
    alternative: dict[str, Any] | None = None,
) -> dict[int, Any]:
    """OpenAPI responses of a route: its success model (and ``alternative``, extra content types
    and headers of the same answer), and ErrorBody for each error status."""
    code, description, model = success
    ok: dict[str, Any] = {"description": description, "content": {"application/json": {"model": model}}}
    if alternative:
        ok["content"] |= alternative.get("content", {})
        ok |= {key: value for key, value in alternative.items() if key != "content"}
    responses: dict[int, Any] = {code: ok}
    all_errors = {
        415: "UNSUPPORTED_MEDIA_TYPE: a body declared as anything but JSON; nothing changed",
        422: "INVALID_REQUEST: the request is malformed; the error says how",
        **(errors or {}),
    }
    for status_code, text in all_errors.items():
        responses[status_code] = {"description": text, "content": {"application/json": {"model": ErrorBody}}}
    return responses
