"""One observability path for every function (Powertools); the tracer is in ``coupon_core.tracing``.

- **Logs**: one Powertools ``Logger``. The domain and the adapters log through the standard
  library's loggers (``logging.getLogger(__name__)``: the domain imports no Lambda library), and
  their roots, ``coupon_core`` and ``lua_redis``, are given this Logger's handler, formatter and
  level (Powertools' ``copy_config_to_registered_loggers``): every line is the same JSON, with
  the invocation's keys (the correlation id among them), and ``POWERTOOLS_LOG_LEVEL`` (or
  ``LOG_LEVEL``) rules them all.
- **Metrics**: one Powertools ``Metrics``, and the intake's own line per answer
  (:func:`count_issue`, below); every metric named after an outcome is named by :func:`metric_name`.

Service name and metrics namespace come from POWERTOOLS_SERVICE_NAME and
POWERTOOLS_METRICS_NAMESPACE; Powertools reads them itself. Every function's handler is wrapped
in Logger's ``inject_lambda_context(clear_state=True)``, except the intake's, wrapped in
:func:`lambda_context`: the same keys on every line, with what cannot change within a container
read once.

The intake's metrics line. Every answer of ``POST /coupon-issues`` is counted by outcome
(``IssueSuccess``, ``IssueSoldOut``, ...) and timed (``IssueLatency``, ms), and a reservation
left held after a failed publish is counted too (``ReleaseFailed``); alarms and dashboards read
these, and ``make plan`` takes its round trips from ``IssueLatency``. Through Powertools'
``Metrics`` those values cost about 28 µs an answer (``bench/intake_fixed_cost.py``): each
``add_metric`` checks its name and unit against lists and formats a debug message, and each flush
builds the document afresh and reads two environment variables to decide whether metrics are
disabled. A sale answers mostly SOLD_OUT and DUPLICATE, each in about 0.1 ms of the handler's own
CPU, so that was a quarter of the answer. So the line is written here, by AWS's embedded metric
format specification
(docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html):
one metric directive in the function's namespace (``POWERTOOLS_METRICS_NAMESPACE``) with the
``service`` dimension (``POWERTOOLS_SERVICE_NAME``), as the other functions' Metrics write it.
All of it but the timestamp and the latency is encoded once per container and set of metric
names; an answer fills those two in and writes the line, compact JSON on stdout, in one write. A test
validates every line against the specification. ``POWERTOOLS_METRICS_DISABLED`` and
``POWERTOOLS_DEV`` are honoured as Powertools documents them, read once, with the first line.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.logging.formatter import BasePowertoolsFormatter
from aws_lambda_powertools.logging.utils import copy_config_to_registered_loggers

from coupon_core.domain.reservations import IssueOutcome

if TYPE_CHECKING:
    from coupon_core.domain.issuing import IssueResult

logger = Logger()
metrics = Metrics()
LIBRARY_LOGGERS = frozenset({"coupon_core", "lua_redis"})  # the roots of the domain's and adapters' loggers
for _name in LIBRARY_LOGGERS:
    logging.getLogger(_name)  # registered now, so that the copy below finds it before its modules log
copy_config_to_registered_loggers(source_logger=logger, include=set(LIBRARY_LOGGERS))

type Handler = Callable[[dict[str, Any], Any], dict[str, Any]]
TRUE = frozenset({"1", "true", "yes", "y", "on", "t"})  # what Powertools reads as true in a variable


def metric_name(prefix: str, outcome: str) -> str:
    """The metric that counts ``outcome`` (an enum member's value): ``Issue`` + ``SOLD_OUT`` is
    ``IssueSoldOut``. The one rule of every such name (the operators' view reads them back)."""
    return prefix + outcome.title().replace("_", "")


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


ISSUE_LATENCY = "IssueLatency"
RELEASE_FAILED = "ReleaseFailed"
FROM_MEMORY = "IssueFromMemory"  # a refusal answered from the container's memory, not Redis
MEMORY_REFRESH = "IssueMemoryRefresh"  # Redis' refusal kept in the memory (its refresh)
ISSUE_COUNT_OF = {outcome: metric_name("Issue", outcome) for outcome in IssueOutcome}
DIMENSION = "service"

_encode = json.JSONEncoder(separators=(",", ":")).encode


@dataclass(frozen=True)
class _Line:
    """One line's encoded parts, around its timestamp (epoch ms) and its latency (ms)."""

    head: str  # up to the timestamp
    middle: str  # from the timestamp to the latency
    tail: str  # after the latency


def count_issue(result: IssueResult, latency_ms: float) -> None:
    """Print the EMF line of one answer: its latency, its outcome's count, a failed release, an
    answer from the memory or a refresh of it."""
    line = _line(
        (ISSUE_COUNT_OF[result.outcome], FROM_MEMORY) if result.remembered
        else (ISSUE_COUNT_OF[result.outcome], MEMORY_REFRESH) if result.learned
        else (ISSUE_COUNT_OF[result.outcome], RELEASE_FAILED) if result.release_failed
        else (ISSUE_COUNT_OF[result.outcome],)
    )  # fmt: skip
    if line is not None:  # None: metrics disabled
        sys.stdout.write(f"{line.head}{int(time.time() * 1000)}{line.middle}{float(latency_ms)!r}{line.tail}\n")


@functools.cache
def _line(counted: tuple[str, ...]) -> _Line | None:
    """The parts of the line of ``IssueLatency`` and the ``counted`` metrics (one each); None when
    metrics are disabled."""
    if metrics_disabled():
        return None
    definitions = [
        {"Name": ISSUE_LATENCY, "Unit": "Milliseconds"},
        *({"Name": name, "Unit": "Count"} for name in counted),
    ]
    directive = {"Namespace": metrics.namespace, "Dimensions": [[DIMENSION]], "Metrics": definitions}
    members = "".join(f",{_encode(name)}:[1.0]" for name in counted)
    return _Line(
        head='{"_aws":{"Timestamp":',
        middle=f',"CloudWatchMetrics":[{_encode(directive)}]}},{_encode(DIMENSION)}:{_encode(metrics.service)},'
        f"{_encode(ISSUE_LATENCY)}:[",
        tail=f"]{members}}}",
    )


def metrics_disabled() -> bool:
    """Metrics are off with ``POWERTOOLS_METRICS_DISABLED`` true, or with ``POWERTOOLS_DEV`` true
    unless ``POWERTOOLS_METRICS_DISABLED`` is set to false (Powertools' documented rule)."""
    explicit = os.environ.get("POWERTOOLS_METRICS_DISABLED")
    setting = explicit if explicit is not None else os.environ.get("POWERTOOLS_DEV", "false")
    return setting.strip().lower() in TRUE
