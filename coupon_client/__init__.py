"""The client of a deployed API (the demo, the smoke test and the integration tests use it).

- ``api_client``: an HTTP client, and a coupon request that retries as clients should.
- ``aws_auth``: SigV4 for IAM routes, a Cognito ID token for the public routes in prod.
"""
