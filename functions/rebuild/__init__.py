"""The rebuild function: Redis reconciled with the database.

app.py             the handler: on the schedule, or on demand for named coupons
event_parsing.py   its two events, told apart and validated before anything changes
dependencies.py    its collaborators, built once per container
"""
