"""Benchmarks: alternatives side by side in one run, printed as ratios (docs/benchmarks.md).

intake.py                 the intake handler from N processes, against the bare handler
bare_intake.py            that bare handler: the same Lua and produce, no framework
intake_forked.py          the intake against it in forked containers, CPU from /proc
cold_start.py             one cold start of the intake in a fresh interpreter
first_seconds.py          a cold opening against a broker that takes new connections at a limited rate
refusal_memory.py         Redis round trips and commands per request with the memory of refusals and without
reserve.py                the reserve: against the ways without a script, one hot coupon's ceiling,
                          what REDIS_WAIT_REPLICAS=1 costs (python -m bench.reserve MODE)
worker.py                 the worker's and the DLQ handler's batching
write_limit.py            the processing limit under a burst
reconcile.py              reconciling a coupon of 100,000 issued users
command_start.py          how soon the coupons command answers, beside aws --version and another commit's
availability.py           pages polling a sale's availability on the local stack: Redis, database, lag
"""
