"""Each environment's stack is synthesized once per session (CloudFormation validation and
cdk-nag run on synth and take seconds), from cdk.json's context, offline, with bundling skipped."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from app import synthesize_offline
from aws_cdk.assertions import Template

os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

ASSEMBLIES: dict[str, Path] = {}  # env -> the cloud assembly synthesized for it


def synthesize(env: str, tmp_path_factory: pytest.TempPathFactory) -> Template:
    outdir = tmp_path_factory.mktemp(f"cdk-{env}")
    _, template = synthesize_offline(env, str(outdir))
    ASSEMBLIES[env] = outdir
    return Template.from_json(template)


@pytest.fixture(scope="session")
def dev(tmp_path_factory: pytest.TempPathFactory) -> Template:
    return synthesize("dev", tmp_path_factory)


@pytest.fixture(scope="session")
def small(tmp_path_factory: pytest.TempPathFactory) -> Template:
    return synthesize("small", tmp_path_factory)


@pytest.fixture(scope="session")
def prod(tmp_path_factory: pytest.TempPathFactory) -> Template:
    return synthesize("prod", tmp_path_factory)


@pytest.fixture(scope="session")
def local(tmp_path_factory: pytest.TempPathFactory) -> Template:
    return synthesize("local", tmp_path_factory)
