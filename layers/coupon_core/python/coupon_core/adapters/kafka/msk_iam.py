"""MSK IAM auth tokens, signed by AWS's signer library with credentials resolved once.

The signer's ``generate_auth_token`` builds a botocore session for every token, to find the
credentials through the default chain: about 20 ms, paid for each broker connection, in the
intake's INIT and again on a request whenever a connection is re-established. Here the chain is
walked once per container and the library signs with what it found (its documented
``generate_auth_token_from_credentials_provider``): about a millisecond per token. Credentials
that expire (a container's or an assumed role's) are botocore's refreshable credentials, which
renew themselves; in Lambda they are the execution role's, in the environment, as before.

Imported on the first token only: it loads botocore and boto3 (about 0.25 s), which only
``KAFKA_AUTH=iam`` needs.
"""

from __future__ import annotations

import functools

import botocore.session
from aws_msk_iam_sasl_signer import MSKAuthTokenProvider
from botocore.credentials import CredentialProvider, Credentials

from coupon_core.errors import ConfigError


class _ResolvedOnce(CredentialProvider):
    """The default credential chain's answer, looked up once."""

    METHOD = "coupon-resolved-once"

    def __init__(self) -> None:
        super().__init__()
        credentials = botocore.session.Session().get_credentials()
        if credentials is None:
            raise ConfigError("KAFKA_AUTH=iam, but no AWS credentials were found to sign MSK's auth token")
        self._credentials = credentials

    def load(self) -> Credentials:
        return self._credentials


@functools.cache
def _credentials() -> _ResolvedOnce:
    return _ResolvedOnce()


def auth_token(region: str) -> str:
    """A SASL OAUTHBEARER token for MSK in ``region``: a presigned ``kafka-cluster:Connect`` URL."""
    token, _expiry_ms = MSKAuthTokenProvider.generate_auth_token_from_credentials_provider(region, _credentials())
    return str(token)
