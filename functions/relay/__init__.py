"""The relay function: the copies past their validity expired, and the outbox published.

app.py            the handler, on the schedule
dependencies.py   its collaborators, built once per container
"""
