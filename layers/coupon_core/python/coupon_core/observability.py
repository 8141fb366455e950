"""One Logger and Metrics for every function (Powertools); the tracer is in ``coupon_core.tracing``.

Service name and metrics namespace come from POWERTOOLS_SERVICE_NAME and
POWERTOOLS_METRICS_NAMESPACE, the log level from LOG_LEVEL; Powertools reads them itself.
"""

from __future__ import annotations

from aws_lambda_powertools import Logger, Metrics

logger = Logger()
metrics = Metrics()
