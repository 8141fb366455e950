"""Each environment's stack is synthesized once per session (CloudFormation validation and
cdk-nag run on synth and take seconds), from cdk.json's context, with bundling skipped."""

from __future__ import annotations

import json
import os
from pathlib import Path

import aws_cdk as cdk
import pytest
from app import build
from aws_cdk.assertions import Template

ROOT = Path(__file__).resolve().parents[2]
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")


def context(env: str) -> dict:
    return {**json.loads((ROOT / "cdk.json").read_text())["context"], "env": env, "aws:cdk:bundling-stacks": []}


def synthesize(env: str, tmp_path_factory: pytest.TempPathFactory) -> Template:
    app = cdk.App(context=context(env), outdir=str(tmp_path_factory.mktemp(f"cdk-{env}")))
    stack = build(app)
    app.synth()  # raises if cdk-nag or CloudFormation validation reports an error
    return Template.from_stack(stack)


@pytest.fixture(scope="session")
def dev(tmp_path_factory: pytest.TempPathFactory) -> Template:
    return synthesize("dev", tmp_path_factory)


@pytest.fixture(scope="session")
def prod(tmp_path_factory: pytest.TempPathFactory) -> Template:
    return synthesize("prod", tmp_path_factory)


@pytest.fixture(scope="session")
def local(tmp_path_factory: pytest.TempPathFactory) -> Template:
    return synthesize("local", tmp_path_factory)
