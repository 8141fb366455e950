"""The CDK app of the coupon system: one stack per environment, built from small constructs.

config.py        cdk.json's environments, validated (pydantic)
stack.py         CouponStack: the constructs below, wired, for a local or an AWS environment
fleet.py         what every function is made with: code, layers, common variables, the stores' access
lambdas/         the seven functions, one module each (spec, variables, Kafka grants, trigger), wired
managed.py       an AWS environment's managed services, and what each function is granted of them
pipeline.py      what only AWS runs: the topics and the worker's mapping, the migration, failed runs
functions.py     a Lambda function with a role of its own (least privilege)
code.py          the functions' package and the layers, as Lambda ships them
locked.py        installs from uv.lock, the one lock of every Python dependency, hash-checked
bytecode.py      the packages' bytecode, compiled for the runtime's Python
api.py           API Gateway (REST) in front of the intake
request_models.py  the gateway's request models, generated from the functions' pydantic models
api_account.py   API Gateway's account settings (its logging role), a stack of its own
waf.py           the WAF web ACL in front of the stage
edge.py          CloudFront in front of a sale's availability, cached a second
network.py       the VPC and its endpoints
stores.py        the data stores: ElastiCache (Valkey), MSK and RDS PostgreSQL
topic.py         the Kafka topics as a custom resource
queues.py        the SQS dead letter queue and its redrive queue
monitoring.py    the alarms' SNS topic and the dashboard; every function's errors and throttles,
                 the API's and the stores' alarms (a function's own are its module's)
retention.py     log retention and what a cdk destroy keeps (an aspect)
nag.py           cdk-nag findings accepted on purpose, each with its reason
checkov_accepted.py  checkov findings accepted on purpose, each with its reason
"""
