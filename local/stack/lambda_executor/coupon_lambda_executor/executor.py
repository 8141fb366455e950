"""A LocalStack ``RuntimeExecutor`` that runs a function in a host Python process.

One process per execution environment, kept warm between invocations as Lambda keeps a
container. The function's code and its layers' ``python/`` folders go on ``PYTHONPATH``, as
Lambda puts them on the path; the interpreter is ``COUPON_LAMBDA_PYTHON``, a bare Python of the
runtime's version started with ``-S`` (no site-packages at all), so that a function imports
only what its deployment package and layers carry. ``COUPON_EXECUTOR_REPORTS`` names the folder
where each process writes what it imported from (``runtime.py``). Invocations go to the process on its
stdin, results come back on a pipe of their own (stdout and stderr are the function's logs).
The environment is ready once the process has imported the handler (Lambda's init phase, bounded
by LocalStack's startup timeout); the function's timeout counts from the invocation, as on AWS.
Past it the process is killed and the invocation fails as Lambda's would ("Task timed out").
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from localstack import config
from localstack.services.lambda_.invocation.lambda_models import FunctionVersion, InvocationResult
from localstack.services.lambda_.invocation.runtime_executor import RuntimeExecutor

LOG = logging.getLogger(__name__)
RUNNER = Path(__file__).with_name("runtime.py")
LOG_WAIT_S = 2.0  # for the log reader to reach an invocation's END line after its result came back
ENVIRONMENT_LOG_TAIL = 8_192  # LocalStack prints the environment's logs on errors: the tail is enough
KEPT_LINES = 200


class HostRuntimeExecutor(RuntimeExecutor):
    def __init__(self, id: str, function_version: FunctionVersion) -> None:
        super().__init__(id, function_version)
        self._env: dict[str, str] = {}
        self._process: subprocess.Popen[bytes] | None = None
        self._results: Any = None
        self._logs: list[str] = []
        self._logs_changed = threading.Condition()
        self._lock = threading.Lock()

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self, env_vars: dict[str, str]) -> None:
        config_ = self.function_version.config
        paths = [str(config_.code.get_unzipped_code_location())]
        for layer in config_.layers or []:
            layer.code.prepare_for_execution()
            paths.append(str(layer.code.get_unzipped_code_location() / "python"))
        self._env = {
            **{k: str(v) for k, v in env_vars.items()},
            "PATH": os.environ.get("PATH", ""),
            "PYTHONPATH": os.pathsep.join(paths),
            "PYTHONUNBUFFERED": "1",
            "COUPON_EXECUTOR_REPORTS": os.environ.get("COUPON_EXECUTOR_REPORTS", ""),
        }
        for name in ("SSL_CERT_FILE", "SSL_CERT_DIR"):  # the runtime's CAs: local/stack/tls.py's TRUST_VARIABLES
            if os.environ.get(f"COUPON_{name}"):
                self._env[name] = os.environ[f"COUPON_{name}"]
        if not self._spawn():
            raise RuntimeError(f"the function's process exited during init: {self.get_logs()[-2000:]}")

    def _spawn(self) -> bool:
        """Start the process and wait for its init phase; False if it exited during init."""
        read_end, write_end = os.pipe()
        python = os.environ.get("COUPON_LAMBDA_PYTHON", sys.executable)
        self._process = subprocess.Popen(
            [python, "-S", str(RUNNER), str(write_end)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=self._env,
            pass_fds=(write_end,),
            start_new_session=True,
        )
        os.close(write_end)
        self._results = os.fdopen(read_end, "rb")
        threading.Thread(target=self._collect_logs, args=(self._process,), daemon=True).start()
        return bool(self._results.readline())  # the init phase; LocalStack's startup timer stops a hung one

    def _collect_logs(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdout is not None
        for line in process.stdout:
            with self._logs_changed:
                self._logs.append(line.decode(errors="replace"))
                self._logs_changed.notify_all()

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.kill()
            process.wait(timeout=10)

    # -- addresses (the process runs on this host) ---------------------------------------------
    def get_address(self) -> str:
        return "127.0.0.1"

    def get_endpoint_from_executor(self) -> str:
        return "127.0.0.1"

    def get_runtime_endpoint(self) -> str:
        return f"http://127.0.0.1:{config.GATEWAY_LISTEN[0].port}/_localstack_lambda/{self.id}"

    # -- invocation -----------------------------------------------------------------------------
    def invoke(self, payload: dict[str, str]) -> InvocationResult:
        request_id = payload["invoke-id"]
        timeout_s = float(self.function_version.config.timeout)
        with self._lock:
            if (self._process is None or self._process.poll() is not None) and not self._spawn():
                return self._failed(request_id, "Runtime.ExitError", "the function's process exited during init")
            assert self._process is not None
            assert self._process.stdin is not None
            start = len(self._logs)
            request = {"requestId": request_id, "functionArn": payload["invoked-function-arn"],
                       "payload": payload["payload"], "timeoutMs": int(timeout_s * 1000)}  # fmt: skip
            self._process.stdin.write(json.dumps(request).encode() + b"\n")
            self._process.stdin.flush()
            answer: list[bytes] = []
            reader = threading.Thread(target=lambda: answer.append(self._results.readline()), daemon=True)
            reader.start()
            reader.join(timeout_s)
            logs = self._invocation_logs(request_id, start, finished=bool(answer and answer[0]))
            if not answer:
                return self._failed(
                    request_id, "Sandbox.Timedout", f"Task timed out after {timeout_s:.2f} seconds", logs
                )
            if not answer[0]:
                return self._failed(request_id, "Runtime.ExitError", "the function's process exited", logs)
            result = json.loads(answer[0])
            return InvocationResult(request_id, result["payload"].encode(), is_error=result["isError"], logs=logs)

    def _invocation_logs(self, request_id: str, start: int, *, finished: bool) -> str:
        """The lines the invocation printed, up to its END line (Lambda's START and END around them).

        Never empty: LocalStack answers empty invocation logs by printing the whole environment's.
        Only the environment's last lines are kept afterwards, for :meth:`get_logs`.
        """
        end = f"END RequestId: {request_id}\n"
        with self._logs_changed:
            if finished:
                self._logs_changed.wait_for(lambda: end in self._logs[start:], timeout=LOG_WAIT_S)
            lines = self._logs[start:]
            del self._logs[:-KEPT_LINES]
        body = lines[: lines.index(end)] if end in lines else lines
        return f"START RequestId: {request_id} Version: $LATEST\n{''.join(body)}{end}"

    def _failed(self, request_id: str, error_type: str, message: str, logs: str = "") -> InvocationResult:
        """Lambda's answer for an environment that timed out or died; it is not reused."""
        self.stop()
        error = {"errorType": error_type, "errorMessage": message}
        return InvocationResult(request_id, json.dumps(error).encode(), is_error=True, logs=logs or self.get_logs())

    def get_logs(self) -> str:
        return "".join(self._logs)[-ENVIRONMENT_LOG_TAIL:]

    @classmethod
    def prepare_version(cls, function_version: FunctionVersion) -> None:
        if function_version.config.code:
            function_version.config.code.prepare_for_execution()

    @classmethod
    def cleanup_version(cls, function_version: FunctionVersion) -> None:
        """Nothing to clean: the process of each environment is stopped with it."""

    @classmethod
    def validate_environment(cls) -> bool:
        return True
