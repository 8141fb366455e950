"""The sale planner behind ``make plan`` and the bill behind ``make bill``: tools for operators,
not infrastructure. It reads an
environment as the CDK app validates it (``coupon_cdk.config``) and says which AWS limit a sale
meets first.

- ``quotas``: the AWS quotas a flash sale meets, in one table, each with the page that states it.
- ``sale_plan``: will a sale fit an environment: the limits, the sale's demands, and what to do.
- ``prices``: the list prices of what an environment keeps running, each with its pricing page.
- ``bill``: what an environment costs a month at idle, read from its synthesized template.
"""
