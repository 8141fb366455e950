"""``make up`` reads the deployed stack's outputs even when LocalStack reports the stack complete
before it has set them (the CLI then writes an empty outputs file)."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import EndpointConnectionError

from local.stack import control
from local.stack.processes import ServiceError

EVERY = {name: f"value of {name}" for name in control.OUTPUTS}


class Stacks:
    """LocalStack's DescribeStacks, answering in turn what ``answers`` holds (an exception is raised),
    then ``then`` for ever."""

    def __init__(self, *answers: dict[str, str] | Exception, then: dict[str, str] = EVERY) -> None:
        self.answers, self.then, self.calls = list(answers), then, 0

    def describe_stacks(self, StackName: str) -> dict[str, Any]:  # noqa: N803 - boto3's name
        self.calls += 1
        answer = self.answers.pop(0) if self.answers else self.then
        if isinstance(answer, Exception):
            raise answer
        outputs = [{"OutputKey": key, "OutputValue": value} for key, value in answer.items()]
        return {"Stacks": [{"StackName": StackName, "Outputs": outputs}]}


def outputs(monkeypatch: pytest.MonkeyPatch, stacks: Stacks, written: dict[str, str]) -> dict[str, str]:
    monkeypatch.setattr(control, "_client", lambda *_: stacks)
    return control._outputs(written, sleep=lambda _: None)


def test_what_the_cli_wrote_is_read_without_asking(monkeypatch: pytest.MonkeyPatch) -> None:
    stacks = Stacks()
    assert outputs(monkeypatch, stacks, EVERY) == EVERY
    assert stacks.calls == 0


def test_outputs_set_after_the_stack_reads_complete_are_read_once_all_are_set(monkeypatch: pytest.MonkeyPatch) -> None:
    some = {"ApiUrl": "https://api"}
    stacks = Stacks({}, EndpointConnectionError(endpoint_url="http://127.0.0.1:4566"), some)
    assert outputs(monkeypatch, stacks, {}) == EVERY
    assert stacks.calls == 4  # nothing, a refused connection, some of them, all of them


def test_outputs_never_all_set_fail_naming_the_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    stacks = Stacks(then={"ApiUrl": "https://api"})
    monkeypatch.setattr(control, "OUTPUTS_S", 0.05)
    with pytest.raises(ServiceError, match="Coupons-local deployed, but without its outputs BuilderFunctionName, "):
        outputs(monkeypatch, stacks, {})
