"""The client of a deployed API, and the operators' ``coupons`` command on it: the one package this
project builds (``pyproject.toml``); the demo, the smoke test, the rehearsal and the integration
tests use its client too. It imports nothing else of the repository.

- ``cli``: the ``coupons`` command (Typer): every admin route, a user's status, ``watch``; light
  to import, so that help, usage errors and completion answer at once.
- ``session``: the target and the identity a call needs (boto3, botocore), loaded on a call only.
- ``output``: what the command prints, as ``--output`` asks (json, table, text).
- ``sale``: a coupon's state and stock as every command says them.
- ``watch``: the live view of a sale (Rich's ``Live``), with close, reopen and top-up keys.
- ``admin``: the operators' routes, one method each, and the error each refusal means.
- ``metrics``: the view's figures from CloudWatch and SQS, or why one cannot be read.
- ``fairness``: how far a sale's winners strayed from arrival order, from the intake's metrics
  lines (read with CloudWatch Logs' FilterLogEvents for ``coupons fairness``).
- ``environment``: the deployment (the stack's outputs, or the local stack's file) and the
  identity (botocore's chain).
- ``arguments``: the command's arguments, checked by the API's bounds before anything is sent.
- ``errors``: one class per cause of failure, each with its exit status.
- ``debug``: ``--debug``'s trace of requests and answers, secrets redacted.
- ``api_client``: an HTTP client, and a coupon request that retries as clients should.
- ``retry``: one click's claim as docs/frontend.md's retry contract says (the browser client's too).
- ``aws_auth``: SigV4 for IAM routes, a Cognito ID token for the public routes in prod.
"""
