"""Connection settings shared by every Kafka client of the project (producer, read-back consumer)."""

from __future__ import annotations

from typing import Any

from kafka.net.sasl.oauth import AbstractTokenProvider

from coupon_core.settings import KafkaSettings


class MskIamTokenProvider(AbstractTokenProvider):
    """SASL OAUTHBEARER tokens for MSK IAM auth, signed with the function's role."""

    def __init__(self, region: str) -> None:
        super().__init__()
        self._region = region

    def token(self) -> str:
        from coupon_core.adapters.kafka.msk_iam import auth_token  # noqa: PLC0415 - only with KAFKA_AUTH=iam

        return auth_token(self._region)


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
