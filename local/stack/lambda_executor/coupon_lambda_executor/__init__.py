"""Run LocalStack's Lambda functions as host Python processes, for machines without Docker.

plugin.py     the LocalStack plugin that registers the executor
executor.py   the executor: one host process per function environment
runtime.py    the runtime loop inside that process, speaking Lambda's runtime API
"""
