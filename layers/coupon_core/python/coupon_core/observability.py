"""One observability path for every function, Powertools' own; the tracer is in ``coupon_core.tracing``.

- **Logs**: one Powertools ``Logger``. The domain and the adapters log through the standard
  library's loggers (``logging.getLogger(__name__)``: the domain imports no Lambda library), and
  their roots, ``coupon_core`` and ``lua_redis``, are given this Logger's handler, formatter and
  level (Powertools' ``copy_config_to_registered_loggers``): every line is the same JSON, with
  the invocation's keys (the correlation id among them), and ``POWERTOOLS_LOG_LEVEL`` (or
  ``LOG_LEVEL``) rules them all. Every handler is wrapped in Logger's
  ``inject_lambda_context(clear_state=True)``.
- **Metrics**: one Powertools ``Metrics``, flushed by each handler's ``log_metrics``; every
  metric named after an outcome is named by :func:`metric_name`. The intake counts each answer
  of ``POST /coupon-issues`` (``functions/intake/app.py``, ``count_issue``) by the names below:
  its outcome (``IssueSuccess``, ``IssueSoldOut``, ...), its latency (``IssueLatency``, ms), a
  reservation left held after a failed publish (``ReleaseFailed``), an answer from the
  container's memory (``IssueFromMemory``) and a refresh of it (``IssueMemoryRefresh``); alarms and dashboards read
  these, and ``make plan`` takes its round trips from ``IssueLatency``. The same line carries
  what the measure of arrival order reads (``coupon_client.fairness``): the coupon, the outcome,
  the request's arrival at API Gateway and when its answer was decided, the request id that
  joins a click's attempts and, for an answer that repeats an earlier decision, that decision's
  time; never a user id or a key.

Service name and metrics namespace come from POWERTOOLS_SERVICE_NAME and
POWERTOOLS_METRICS_NAMESPACE; Powertools reads them itself.
"""

from __future__ import annotations

import logging

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.logging.utils import copy_config_to_registered_loggers

from coupon_core.domain.reservations import IssueOutcome

logger = Logger()
metrics = Metrics()
LIBRARY_LOGGERS = frozenset({"coupon_core", "lua_redis"})  # the roots of the domain's and adapters' loggers
for _name in LIBRARY_LOGGERS:
    logging.getLogger(_name)  # registered now, so that the copy below finds it before its modules log
copy_config_to_registered_loggers(source_logger=logger, include=set(LIBRARY_LOGGERS))


def metric_name(prefix: str, outcome: str) -> str:
    """The metric that counts ``outcome`` (an enum member's value): ``Issue`` + ``SOLD_OUT`` is
    ``IssueSoldOut``. The one rule of every such name (the operators' view reads them back)."""
    return prefix + outcome.title().replace("_", "")


ISSUE_LATENCY = "IssueLatency"
RELEASE_FAILED = "ReleaseFailed"
FROM_MEMORY = "IssueFromMemory"  # a refusal answered from the container's memory, not Redis
MEMORY_REFRESH = "IssueMemoryRefresh"  # Redis' refusal kept in the memory (its refresh)
ISSUE_COUNT_OF = {outcome: metric_name("Issue", outcome) for outcome in IssueOutcome}
