"""Exceptions the domain sees from its adapters, so that it needs no driver's types."""

from __future__ import annotations


class DatabaseUnavailableError(Exception):
    """The database could not be reached or refused the transaction; worth retrying later."""


class DeadLetterNotSentError(Exception):
    """A dead letter could not be handed to the queue."""


class ReadBackError(Exception):
    """Records could not be read back from Kafka by offset (broker down, range gone or too large)."""
