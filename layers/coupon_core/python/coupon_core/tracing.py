"""The X-Ray tracer (Powertools) for the functions whose cold start can afford it.

Importing the X-Ray SDK costs about half a second, even with tracing disabled. The worker, the
DLQ handler and the rebuild use it: their AWS calls (SQS, Secrets Manager) become subsegments.
The two HTTP functions do not: the intake's hot path is Redis and Kafka, which the SDK does not
instrument, and every cold container in a flash sale's scale-out would pay the import on a
user's request; the coupons function answers users too (a request's status, use, cancel).
Both are still traced: API Gateway and Lambda's active tracing record their segments without
the SDK.
"""

from __future__ import annotations

from aws_lambda_powertools import Tracer

tracer = Tracer()
