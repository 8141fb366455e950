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


ACCOUNT, REGION = "123456789012", "eu-west-1"
ONCALL = "oncall@example.com"  # who a deployer names with -c alarmEmails=... (prod requires one)
# What `cdk synth` with credentials looks up once and keeps in cdk.context.json
LOOKUPS = {f"availability-zones:account={ACCOUNT}:region={REGION}": [f"{REGION}{az}" for az in "abc"]}


def context(env: str) -> dict:
    return {
        **json.loads((ROOT / "cdk.json").read_text())["context"],
        **LOOKUPS,
        "env": env,
        "account": ACCOUNT,
        "region": REGION,
        "alarmEmails": ONCALL,
        "aws:cdk:bundling-stacks": [],
    }


ASSEMBLIES: dict[str, Path] = {}  # env -> the cloud assembly synthesized for it


def synthesize(env: str, tmp_path_factory: pytest.TempPathFactory) -> Template:
    outdir = tmp_path_factory.mktemp(f"cdk-{env}")
    app = cdk.App(context=context(env), outdir=str(outdir))
    stack = build(app)
    app.synth()  # raises if cdk-nag or CloudFormation validation reports an error
    ASSEMBLIES[env] = outdir
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
