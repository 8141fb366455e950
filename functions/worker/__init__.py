"""The worker function and the DLQ handler.

app.py            the worker: MSK batches of accepted requests persisted to PostgreSQL
dlq.py            the DLQ handler: each dead letter's reservation released, its failure recorded
dependencies.py   the worker's collaborators, built once per container
dlq_dependencies.py  the DLQ handler's
"""
