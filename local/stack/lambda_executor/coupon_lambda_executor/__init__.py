"""Run LocalStack's Lambda functions as host Python processes, for machines without Docker."""
