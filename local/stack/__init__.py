"""The whole system on this machine, without Docker.

- ``control``: ``make up`` / ``make down`` (``python -m local.stack.control up | down | env``).
- ``services``: embedded Valkey, PostgreSQL and Tansu (Kafka protocol) on loopback, over TLS
  and with credentials: each one's starter (``valkey``, ``postgres``, ``tansu``) and every one
  at once; ``processes``: what they share (their processes, files, sockets, URLs and errors).
- ``tls``: the stack's certificate authority, made once, and the trust store its clients use.
- ``tls_front``: stunnel in front of each store, whose embedded build has no TLS of its own.
- ``postgres_install``: the PostgreSQL install where its system user can run it.
- ``localstack``: LocalStack on the host, with the Lambda executor in ``lambda_executor/`` (a
  LocalStack plugin, installed into LocalStack's own virtual environment).
- ``bridge``: the Kafka-to-Lambda bridge standing in for the MSK event source mapping.
"""
