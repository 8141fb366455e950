"""Each environment's stack is synthesized once per session (CloudFormation validation and
cdk-nag run on synth and take seconds), from cdk.json's context, offline, with bundling skipped."""

from __future__ import annotations

import json
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
    if (shared := _run_folder(tmp_path_factory)) is not None:
        partial = shared / f".cdk-{env}-{os.getpid()}.json"
        partial.write_text(json.dumps(template))
        partial.replace(shared / f"cdk-{env}.template.json")  # whole or not there, for the other workers
    return Template.from_json(template)


def synthesized(env: str, tmp_path_factory: pytest.TempPathFactory) -> Template:
    """The environment's template as the infra tier's worker of this run synthesized it, or, not
    yet there (or no other worker), synthesized here: a synth with cdk-nag takes seconds."""
    shared = _run_folder(tmp_path_factory)
    if shared is not None and (path := shared / f"cdk-{env}.template.json").exists():
        return Template.from_json(json.loads(path.read_text()))
    return synthesize(env, tmp_path_factory)


def _run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path | None:
    """The folder this run's xdist workers share (each one's base temporary folder is in it; a
    run without workers has none: its base's parent holds earlier runs' too)."""
    return tmp_path_factory.getbasetemp().parent if os.environ.get("PYTEST_XDIST_WORKER") else None


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
