"""The command line's target and identity, resolved on a command's first call: the only module of
the command that imports boto3 and botocore, and only a command that calls something imports it
(``--help``, a usage error and the completion scripts never do).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import boto3
from botocore.credentials import Credentials

from coupon_client import environment
from coupon_client.admin import AdminApi
from coupon_client.api_client import ApiClient
from coupon_client.aws_auth import id_token, sigv4
from coupon_client.debug import Tracer
from coupon_client.errors import UnknownEnvironmentError
from coupon_client.metrics import StackMetrics


class Session:
    """Where the command's calls go, and as whom: ``--env`` (the stack's outputs; ``local``: the
    local stack, with its test identity) or ``--api-url``, through ``--endpoint-url`` when AWS's
    APIs are reached at one's own; signed with the operator's credentials, checked once."""

    def __init__(
        self,
        *,
        env: str | None,
        api_url: str | None,
        endpoint_url: str | None,
        profile: str | None,
        region: str | None,
        debug: bool,
        read_timeout: float,
    ) -> None:
        self._env, self._api_url, self._profile, self._region = env, api_url, profile, region
        self._read_timeout = read_timeout
        self._tracer = Tracer(sys.stderr) if debug else None
        self._local = environment.local_stack(Path.cwd()) if env == environment.LOCAL else None
        self._endpoint = endpoint_url or (self._local.endpoint if self._local else None)
        self._aws: boto3.Session | None = None
        self._target: environment.Target | None = None
        self._credentials: Credentials | None = None

    def aws(self) -> boto3.Session:
        if self._aws is None:
            self._aws = environment.aws_session(self._profile, self._region, self._local)
            if self._tracer is not None:
                self._aws.events.register("before-send", self._sent)
                self._aws.events.register("after-call", self._answered)
        return self._aws

    def credentials(self) -> Credentials:
        """The operator's credentials, checked once (an expired SSO session is said before anything is sent)."""
        if self._credentials is None:
            self._credentials = environment.credentials(self.aws())
        return self._credentials

    def target(self) -> environment.Target:
        if self._target is None:
            if self._api_url:
                region = environment.region_in(self._api_url) or environment.region_of(self.aws())
                self._target = environment.Target(self._api_url, region, aws_endpoint=self._endpoint)
            elif self._env:
                self.credentials()  # before the stack lookup: a missing identity is said as such
                self._target = environment.find(self.aws(), self._env, self._endpoint)
            else:
                raise UnknownEnvironmentError(
                    "which environment? pass --env NAME (or set COUPONS_ENV; local: the stack make up runs) "
                    "or --api-url URL"
                )
        return self._target

    def admin(self, token: str | None = None) -> AdminApi:
        target = self.target()
        sign = id_token(token) if token else sigv4(target.region, self.credentials())
        client = ApiClient(target.api_url, timeout_s=self._read_timeout, connections=2, sign=sign, trace=self._tracer)
        return AdminApi(client, target.api_url, target.region)

    def metrics(self) -> StackMetrics:
        return StackMetrics(self.aws(), self.target())

    def _sent(self, request: Any, **_: Any) -> None:
        assert self._tracer is not None
        self._tracer.request(request.method, request.url, request.headers, request.body)

    def _answered(self, http_response: Any, **_: Any) -> None:
        assert self._tracer is not None
        self._tracer.answer(http_response.status_code, None, http_response.headers, http_response.content)
