"""The parts only the functions behind the intake read: the database, how long a coupon's Redis
state outlives its window, the worker group's offsets, and the read-back of records."""

from __future__ import annotations

import re
from typing import Annotated, Self
from urllib.parse import parse_qs, urlsplit

from pydantic import Field, model_validator

from coupon_core.settings import Settings, url_of

HOUR_MS = 3_600_000


class DatabaseSettings(Settings):
    """Either a URL (tests, tools) or a Secrets Manager secret (AWS, and the functions on
    LocalStack), exactly one of them.

    A URL asks for TLS with libpq's words: ``?sslmode=verify-full`` (the certificate checked
    against the platform's trust store, and the host against it), else plain text. A secret
    always means TLS verified so. ``host`` (DB_HOST) replaces the secret's host, to connect
    through an RDS Proxy.
    """

    url: Annotated[str | None, Field(validation_alias="DATABASE_URL")] = None
    secret_arn: Annotated[str | None, Field(validation_alias="DB_SECRET_ARN")] = None
    host: Annotated[str | None, Field(validation_alias="DB_HOST")] = None

    @model_validator(mode="after")
    def _one_of_them(self) -> Self:
        if (self.url is None) == (self.secret_arn is None):
            raise ValueError("exactly one of DATABASE_URL and DB_SECRET_ARN must be set")
        if self.url is not None:
            try:
                url_of("postgresql+pg8000")(self.url)
            except ValueError as exc:
                raise ValueError(f"DATABASE_URL {exc}") from None
            modes = parse_qs(urlsplit(self.url).query).get("sslmode", [])
            if modes not in ([], ["verify-full"]):
                raise ValueError(f"DATABASE_URL's sslmode must be verify-full (or absent, for plain text); got {modes}")
            return self
        assert self.secret_arn is not None
        if not self.secret_arn.startswith("arn:") or ":secretsmanager:" not in self.secret_arn:
            raise ValueError(f"DB_SECRET_ARN must be a Secrets Manager secret ARN; got {self.secret_arn!r}")
        if self.host is not None and not re.fullmatch(r"[A-Za-z0-9.-]{1,253}", self.host):
            raise ValueError(f"DB_HOST must be a host name; got {self.host!r}")
        return self


class RetentionSettings(Settings):
    """How long a coupon's Redis keys outlive its window; every function that writes them must agree."""

    state_hours: Annotated[int, Field(validation_alias="STATE_RETENTION_HOURS", ge=1, le=24 * 366)] = 24 * 7

    @property
    def state_ms(self) -> int:
        return self.state_hours * HOUR_MS


class ConsumerGroupSettings(Settings):
    """The worker's consumer group, whose committed offsets tell which records are in flight."""

    group: Annotated[str, Field(validation_alias="KAFKA_CONSUMER_GROUP", pattern=r"^[A-Za-z0-9._-]{1,255}$")]


class ReadBackSettings(Settings):
    """Bounds on reading an on-failure letter's offset ranges back from Kafka."""

    max_records: Annotated[int, Field(validation_alias="READ_BACK_MAX_RECORDS", ge=1, le=100_000)] = 10_000
    timeout_s: Annotated[int, Field(validation_alias="READ_BACK_TIMEOUT_S", ge=1, le=600)] = 20
