"""MSK IAM auth tokens, signed by AWS's signer library with credentials resolved once.

The signer's ``generate_auth_token`` builds a botocore session for every token, to find the
credentials through the default chain: about 20 ms, paid for each broker connection, in the
intake's INIT and again on a request whenever a connection is re-established. Here the chain is
walked once per container (``aws_credentials.resolved_once``) and the library signs with what
it found (its documented ``generate_auth_token_from_credentials_provider``): about a
millisecond per token.

Imported on the first token only: it loads botocore and boto3 (about 0.25 s), which only
``KAFKA_AUTH=iam`` needs.
"""

from __future__ import annotations

from aws_msk_iam_sasl_signer import MSKAuthTokenProvider

from coupon_core.adapters.aws_credentials import resolved_once


def auth_token(region: str) -> str:
    """A SASL OAUTHBEARER token for MSK in ``region``: a presigned ``kafka-cluster:Connect`` URL."""
    credentials = resolved_once("KAFKA_AUTH=iam")
    token, _expiry_ms = MSKAuthTokenProvider.generate_auth_token_from_credentials_provider(region, credentials)
    return str(token)
