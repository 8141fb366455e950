"""``make up`` reads the deployed stack's outputs even when LocalStack reports the stack complete
before it has set them (the CLI then writes an empty outputs file)."""

from __future__ import annotations

from typing import Any

import pytest

from local.stack import control
from local.stack.processes import ServiceError


class Stacks:
    """LocalStack's DescribeStacks: no outputs for the first ``empty`` calls, then the stack's."""

    def __init__(self, empty: int) -> None:
        self.empty, self.calls = empty, 0

    def describe_stacks(self, StackName: str) -> dict[str, Any]:  # noqa: N803 - boto3's name
        self.calls += 1
        outputs = [] if self.calls <= self.empty else [{"OutputKey": "ApiUrl", "OutputValue": "https://api"}]
        return {"Stacks": [{"StackName": StackName, "Outputs": outputs}]}


@pytest.fixture
def stacks(monkeypatch: pytest.MonkeyPatch) -> Stacks:
    monkeypatch.setattr(control.time, "sleep", lambda _: None)
    return Stacks(empty=3)


def test_what_the_cli_wrote_is_read_without_asking(monkeypatch: pytest.MonkeyPatch, stacks: Stacks) -> None:
    monkeypatch.setattr(control, "_client", lambda _: stacks)
    assert control._outputs({"ApiUrl": "https://written"}) == {"ApiUrl": "https://written"}
    assert stacks.calls == 0


def test_outputs_set_after_the_stack_reads_complete_are_read_once_set(
    monkeypatch: pytest.MonkeyPatch, stacks: Stacks
) -> None:
    monkeypatch.setattr(control, "_client", lambda _: stacks)
    assert control._outputs({}) == {"ApiUrl": "https://api"}
    assert stacks.calls == 4


def test_outputs_never_set_fail_naming_the_stack(monkeypatch: pytest.MonkeyPatch, stacks: Stacks) -> None:
    stacks.empty = 10**9
    monkeypatch.setattr(control, "_client", lambda _: stacks)
    monkeypatch.setattr(control, "OUTPUTS_S", 0.0)
    with pytest.raises(ServiceError, match="Coupons-local deployed, but without its outputs"):
        control._outputs({})
