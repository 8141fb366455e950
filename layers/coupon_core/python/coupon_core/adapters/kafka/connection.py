"""Connection settings shared by every Kafka client of the project (producer, read-back consumer)."""

from __future__ import annotations

from typing import Any

from kafka.net.sasl.oauth import AbstractTokenProvider

from coupon_core.settings import KafkaSettings


class MskIamTokenProvider(AbstractTokenProvider):
    """SASL OAUTHBEARER tokens for MSK IAM auth (a presigned ``kafka-cluster:Connect`` URL), signed
    with the function's role.

    The signer's ``generate_auth_token`` builds a botocore session for every token, to find the
    credentials through the default chain: about 20 ms, paid for each broker connection, in the
    intake's INIT and again whenever a connection is re-established. Here the chain is walked
    once per container (``aws_credentials.resolved_once``) and the library signs with what it
    found (its documented ``generate_auth_token_from_credentials_provider``): about a millisecond.
    The signer is imported on the first token only: it loads botocore and boto3 (about 0.25 s),
    which only ``KAFKA_AUTH=iam`` needs."""

    def __init__(self, region: str) -> None:
        super().__init__()
        self._region = region

    def token(self) -> str:
        from aws_msk_iam_sasl_signer import MSKAuthTokenProvider  # noqa: PLC0415 - only with KAFKA_AUTH=iam

        from coupon_core.adapters.aws_credentials import resolved_once  # noqa: PLC0415

        credentials = resolved_once("KAFKA_AUTH=iam")
        token, _expiry_ms = MSKAuthTokenProvider.generate_auth_token_from_credentials_provider(
            self._region, credentials
        )
        return str(token)


def connection_config(settings: KafkaSettings, timeout_ms: int) -> dict[str, Any]:
    """Servers, encryption and authentication (plain text, TLS, or MSK IAM over TLS) and bounded
    waits. TLS verifies the brokers against the platform's trust store (kafka-python's default)."""
    config: dict[str, Any] = {
        "bootstrap_servers": list(settings.bootstrap_servers),
        "request_timeout_ms": timeout_ms,
        "bootstrap_timeout_ms": timeout_ms,
        "reconnect_backoff_max_ms": 1_000,
        "connections_max_idle_ms": 300_000,
    }
    if settings.auth == "iam":
        config |= {
            "security_protocol": "SASL_SSL",
            "sasl_mechanism": "OAUTHBEARER",
            "sasl_oauth_token_provider": MskIamTokenProvider(str(settings.region)),
        }
    elif settings.tls:
        config["security_protocol"] = "SSL"
    return config
