"""The sale planner behind ``make plan``: a tool for operators, not infrastructure. It reads an
environment as the CDK app validates it (``coupon_cdk.config``) and says which AWS limit a sale
meets first.

- ``quotas``: the AWS quotas a flash sale meets, in one table, each with the page that states it.
- ``sale_plan``: will a sale fit an environment: the limits, the sale's demands, and what to do.
"""
