"""The plux plugin LocalStack finds through the ``localstack.lambda.runtime_executor`` entry point.

Selected with ``LAMBDA_RUNTIME_EXECUTOR=host``.
"""

from __future__ import annotations

from localstack.services.lambda_.invocation.plugins import RuntimeExecutorPlugin


class HostExecutorPlugin(RuntimeExecutorPlugin):
    name = "host"

    def load(self, *args: object, **kwargs: object) -> type:
        from coupon_lambda_executor.executor import HostRuntimeExecutor  # noqa: PLC0415 - loaded on demand, like Docker's

        executor: type = HostRuntimeExecutor
        return executor
