"""The rebuild code, deployed as two functions that share it: the rebuild (Redis reconciled with
the database, on the schedule or on demand) and the builder (the state the intake finds missing).

Two functions so that each has its own reserved concurrency: whatever the public traffic makes
the intake ask of the builder, the schedule's reconcile and the operators' always find the
rebuild free. Each handler refuses the other's events.

app.py             the rebuild's handler: on the schedule, or on demand for named coupons
build.py           the builder's handler: one coupon's missing state, for the intake
event_parsing.py   their events, told apart and validated before anything changes
dependencies.py    their collaborators, built once per container
"""
