"""Kafka (MSK) clients: the intake's producer and the DLQ handler's read-back consumer."""
