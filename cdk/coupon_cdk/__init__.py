"""The CDK app of the coupon system: one stack per environment, built from small constructs."""
