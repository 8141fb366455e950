"""How a client of a deployed API authenticates: SigV4 for routes with IAM authorization (the
admin routes everywhere, the public ones in dev), a Cognito ID token for the public routes in
prod. Each is a ``Signer``: given a request, the headers to add."""

from __future__ import annotations

from collections.abc import Callable

import botocore.session
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

Signer = Callable[[str, str, bytes | None, dict[str, str]], dict[str, str]]


def sigv4(region: str, credentials: Credentials | None = None) -> Signer:
    """Signs for execute-api with ``credentials``, by default the caller's from botocore's chain
    (environment, profile or role); refreshable ones (SSO, a role) are refreshed as they expire."""
    credentials = credentials or botocore.session.get_session().get_credentials()
    if credentials is None:
        raise RuntimeError("no AWS credentials to sign requests with (set a profile or AWS_ACCESS_KEY_ID)")

    def sign(method: str, url: str, body: bytes | None, headers: dict[str, str]) -> dict[str, str]:
        request = AWSRequest(method=method, url=url, data=body or b"", headers=headers)
        SigV4Auth(credentials.get_frozen_credentials(), "execute-api", region).add_auth(request)
        return dict(request.headers.items())

    return sign


def id_token(token: str | Callable[[], str]) -> Signer:
    """The Cognito ID token (it carries the user id claim; an access token does not): a token, or
    a function that returns the current one, asked before every request (so a token refreshed
    as it expires, an hour after sign-in, is the one a resend after a 401 carries)."""
    current = token if callable(token) else lambda: token
    return lambda _method, _url, _body, _headers: {"Authorization": current()}
