"""Everything that runs the system off AWS, split by who uses it.

- ``stack``: the local stack itself (``make up`` / ``make down``): embedded servers, LocalStack
  and its Lambda executor, the Kafka-to-Lambda bridge.
- ``tools``: what a person runs against it: the demo, the chaos run, the smoke test of a
  deployed environment, the OpenAPI generator, and the parts of their reports.
- ``planner``: the sale planner behind ``make plan`` (the AWS quotas a sale meets, and whether
  it fits an environment) and the idle bill behind ``make bill``.
- ``testkit``: what tests and benchmarks import to drive the real servers: Lambda events,
  topics, a fault-injecting proxy, Redis's MONITOR, a multi-process flash sale.

The arrows run one way: ``tools`` -> ``stack``, ``testkit``, ``planner``; ``stack`` -> ``testkit``; the
client of a deployed API is ``coupon_client``, beside this package, which ``tools`` and ``stack`` use.
"""
