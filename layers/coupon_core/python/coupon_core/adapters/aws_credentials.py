"""The execution role's credentials, found once per container by botocore's default chain.

The tokens this project signs itself (MSK IAM for Kafka, ElastiCache IAM for Redis) are signed
with these: walking the chain costs about 20 ms (a botocore session), signing with what it found
about a millisecond. Credentials that expire (a container's, an assumed role's) are botocore's
refreshable credentials, which renew themselves; in Lambda they are the execution role's, in the
environment. Imported only where a token is signed: it loads botocore.
"""

from __future__ import annotations

import functools

import botocore.session
from botocore.credentials import CredentialProvider, Credentials

from coupon_core.errors import NoCredentialsError


class ResolvedOnce(CredentialProvider):
    """The default credential chain's answer, looked up once."""

    METHOD = "coupon-resolved-once"

    def __init__(self, needed_by: str) -> None:
        super().__init__()
        credentials = botocore.session.Session().get_credentials()
        if credentials is None:
            raise NoCredentialsError(f"{needed_by}, but no AWS credentials were found to sign its token")
        self._credentials = credentials

    def load(self) -> Credentials:
        return self._credentials


@functools.cache
def resolved_once(needed_by: str) -> ResolvedOnce:
    """The credentials, found on the first call for ``needed_by`` (``"KAFKA_AUTH=iam"``, ...); a
    failed lookup is not remembered, so the next call looks again."""
    return ResolvedOnce(needed_by)
