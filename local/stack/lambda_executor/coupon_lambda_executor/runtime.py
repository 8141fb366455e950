"""Runs inside the function's process: imports the handler once, then serves invocations.

Writes one line on the file descriptor given as the first argument once the handler is imported
(Lambda's init phase, which AWS does not count against the function's timeout), then reads one
JSON request per line on stdin and writes one JSON result per line on that descriptor; the
function's own prints and logs go to stdout, each invocation's closed by Lambda's
``END RequestId: ...`` line. With ``COUPON_EXECUTOR_REPORTS`` set, it also writes there where it
imported its packages from, and every AWS API call the function makes (LocalStack enforces no
IAM: a test holds the calls against the function's role).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import json
import os
import sys
import time
import traceback
from typing import Any


class Context:
    """The Lambda context object, as much of it as handlers use."""

    def __init__(self, request: dict[str, Any]) -> None:
        self.aws_request_id = request["requestId"]
        self.invoked_function_arn = request["functionArn"]
        self.function_name = os.environ.get("AWS_LAMBDA_FUNCTION_NAME", "function")
        self.function_version = os.environ.get("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST")
        self.memory_limit_in_mb = int(os.environ.get("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "128"))
        self.log_group_name = os.environ.get("AWS_LAMBDA_LOG_GROUP_NAME", "")
        self.log_stream_name = os.environ.get("AWS_LAMBDA_LOG_STREAM_NAME", "")
        self._deadline = time.monotonic() + request["timeoutMs"] / 1000

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.monotonic()) * 1000))


def _load_handler() -> Any:
    module_path, _, name = os.environ["_HANDLER"].rpartition(".")
    return getattr(importlib.import_module(module_path.replace("/", ".")), name)


def _invoke(handler: Any, request: dict[str, Any]) -> dict[str, Any]:
    """The handler's answer, or its error, as the invocation's result."""
    try:
        answer = handler(json.loads(request["payload"] or "null"), Context(request))
    except Exception as exc:  # the function's error is the invocation's result
        traceback.print_exc()
        error = {"errorType": type(exc).__name__, "errorMessage": str(exc),
                 "stackTrace": traceback.format_tb(exc.__traceback__)}  # fmt: skip
        return {"isError": True, "payload": json.dumps(error)}
    return {"isError": False, "payload": json.dumps(answer)}


REPORTED = ("redis", "kafka", "aws_lambda_powertools", "boto3", "sqlalchemy", "coupon_core", "lua_redis", "functions")


def _report(path: str) -> None:
    """Where this process's interpreter and packages come from, at ``path`` (a test reads it:
    nothing of the development venv may be among them): each package's file, or each folder of a
    namespace package (``functions``, ``coupon_core``, ``lua_redis``); None if not imported."""
    modules = {name: _origins(sys.modules.get(name)) for name in REPORTED}
    report = {"function": os.environ.get("AWS_LAMBDA_FUNCTION_NAME"), "python": sys.executable,
              "version": list(sys.version_info[:2]), "noSite": bool(sys.flags.no_site), "path": sys.path,
              "modules": modules}  # fmt: skip
    with open(path, "w", encoding="utf-8") as out:
        json.dump(report, out)


def _origins(module: object) -> list[str] | None:
    if module is None:
        return None
    file = getattr(module, "__file__", None)
    return [file] if file else list(getattr(module, "__path__", []))


class _RecordAwsCalls(importlib.abc.MetaPathFinder):
    """Once ``botocore.client`` is imported (boto3 imports it whenever the function first needs a
    client), every AWS API call the function makes is appended to
    ``COUPON_EXECUTOR_REPORTS/<function>-<pid>.calls`` (a test checks each against the
    function's role; LocalStack's free edition enforces no IAM). Nothing is imported early."""

    def __init__(self, path: str) -> None:
        self._path = path

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "botocore.client":
            return None
        sys.meta_path.remove(self)  # once, and the other finders find the module itself
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        execute, record = spec.loader.exec_module, self._record

        def exec_module(module: Any) -> None:
            execute(module)
            original = module.BaseClient._make_api_call

            def recorded(client: Any, operation: str, params: dict[str, Any]) -> Any:
                record(client.meta.service_model.service_name, operation, params)
                return original(client, operation, params)

            module.BaseClient._make_api_call = recorded

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec

    def _record(self, service: str, operation: str, params: dict[str, Any]) -> None:
        resource = next((str(params[key]) for key in RESOURCE_PARAMETERS if key in params), None)
        with open(self._path, "a", encoding="utf-8") as out:
            out.write(json.dumps({"service": service, "operation": operation, "resource": resource}) + "\n")


RESOURCE_PARAMETERS = ("QueueUrl", "FunctionName", "SecretId", "TopicArn")


def main() -> None:
    results = os.fdopen(int(sys.argv[1]), "w", buffering=1)
    folder = os.environ.get("COUPON_EXECUTOR_REPORTS")
    reports = os.path.join(folder, f"{os.environ.get('AWS_LAMBDA_FUNCTION_NAME')}-{os.getpid()}") if folder else None
    if reports:
        sys.meta_path.insert(0, _RecordAwsCalls(f"{reports}.calls"))
    try:
        handler = _load_handler()
        if reports:
            _report(f"{reports}.json")
        failure = None
    except Exception as exc:  # an import error fails every invocation, as Lambda's init error does
        handler, failure = None, {"errorType": "Runtime.ImportModuleError", "errorMessage": repr(exc)}
        traceback.print_exc()
    results.write(json.dumps({"ready": True}) + "\n")
    for line in sys.stdin:
        request = json.loads(line)
        result = _invoke(handler, request) if handler is not None else {"isError": True, "payload": json.dumps(failure)}
        print(f"END RequestId: {request['requestId']}", flush=True)  # the executor's end of this invocation's logs
        results.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
