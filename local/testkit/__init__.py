"""What tests and benchmarks import to drive the real servers and the handlers.

- ``lambda_events``: Lambda events and context as AWS sends them, for in-process calls.
- ``kafka_topics``: topics created, records read back by offset, offsets committed.
- ``fault_proxy``: a TCP proxy that loses replies, drops connections, holds acknowledgements.
- ``redis_monitor``: what clients send to Redis, as MONITOR reports it.
- ``stores``: every Redis call on a coupon's state in one object, to reserve and rebuild in a test.
- ``flash_sale``: a flash sale against Redis from several processes and threads.
- ``http_functions``: API Gateway's routing: the issue request to the intake, the rest to the coupons function.
- ``lambda_service``: Lambda's Invoke API on the loopback, running a function's handler in-process.
- ``gateway_wsgi``: API Gateway's proxy integration as a WSGI app, for the API fuzzer.
- ``checkov``: checkov's IaC rules on synthesized templates, from a virtual environment of its own.
- ``tables``: the tables requests write, and their row counts.
- ``bad_requests``: the malformed requests every check of I5 sends.
- ``browser``: headless Chromium on a page: its DOM once its scripts ran, and a screenshot.
- ``intake_lines``: the intake's metrics lines (printed in-process, or in its log group), for
  the reports' arrival order.
"""
