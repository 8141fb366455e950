"""One Logger and Metrics for every function (Powertools); the tracer is in ``coupon_core.tracing``.

Service name and metrics namespace come from POWERTOOLS_SERVICE_NAME and
POWERTOOLS_METRICS_NAMESPACE, the log level from LOG_LEVEL; Powertools reads them itself.

Every function's handler is wrapped in Logger's ``inject_lambda_context(clear_state=True)``,
except the intake's, wrapped in :func:`lambda_context`: the same keys on every line, with what
cannot change within a container read once.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.logging.formatter import BasePowertoolsFormatter

logger = Logger()
metrics = Metrics()

type Handler = Callable[[dict[str, Any], Any], dict[str, Any]]
TRUE = frozenset({"1", "true", "yes", "y", "on", "t"})  # what Powertools reads as true in a variable


def lambda_context(correlation_id: Callable[[dict[str, Any]], str | None]) -> Callable[[Handler], Handler]:
    """Logger's ``inject_lambda_context(clear_state=True)`` for a handler whose every answer counts.

    Each line logged during an invocation carries the same keys as under Powertools' decorator:
    ``cold_start``, ``function_name``, ``function_memory_size``, ``function_arn``,
    ``function_request_id`` and ``correlation_id`` (here ``correlation_id(event)``), and none that
    an earlier invocation appended. Powertools' decorator rebuilds all of them on every
    invocation, and finds the correlation id by a JMESPath expression: about 17 µs (this, 5 µs) of a
    SOLD_OUT answer that takes 0.1-0.2 ms of the intake's CPU (docs/benchmarks.md). Here the function's
    name, memory and ARN, which a container never changes, are read on its first invocation with
    the logger's formatter, and each invocation resets the formatter's keys (its own
    ``clear_state``) and appends the rest.

    What operators configure through the decorator works here too, through Logger's public calls:
    ``POWERTOOLS_LOGGER_LOG_EVENT`` logs each event, ``POWERTOOLS_LOGGER_SAMPLE_RATE`` samples each
    warm invocation afresh (``refresh_sample_rate_calculation``), and a log buffer, if the logger
    has one, is flushed on an uncaught error and cleared after each invocation.
    Tests hold the lines, in each of those settings, to those Powertools' decorator writes.
    """

    def decorator(handler: Handler) -> Handler:
        formatter: BasePowertoolsFormatter | None = None  # the logger's, with the container's keys below
        container: dict[str, Any] = {}
        log_event = os.environ.get("POWERTOOLS_LOGGER_LOG_EVENT", "false").strip().lower() in TRUE

        @functools.wraps(handler)
        def decorate(event: dict[str, Any], context: Any) -> dict[str, Any]:
            nonlocal formatter
            first = formatter is None  # the container's first invocation
            cold_start = first and os.environ.get("AWS_LAMBDA_INITIALIZATION_TYPE") != "provisioned-concurrency"
            if formatter is None:
                formatter = logger.registered_formatter
                container.update(
                    function_name=context.function_name,
                    function_memory_size=context.memory_limit_in_mb,
                    function_arn=context.invoked_function_arn,
                )
            formatter.clear_state()
            formatter.append_keys(
                cold_start=cold_start,
                **container,
                function_request_id=context.aws_request_id,
                correlation_id=correlation_id(event),
            )
            if log_event:
                logger.info(event)
            if logger.sampling_rate and not cold_start:
                logger.refresh_sample_rate_calculation()
            try:
                return handler(event, context)
            except BaseException:
                logger.flush_buffer()
                raise
            finally:
                logger.clear_buffer()

        return decorate

    return decorator
