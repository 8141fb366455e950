"""Lambda code and layers: the functions package, the two shared layers, and third-party
dependencies bundled locally with pip for the Lambda platform (never with Docker)."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tomllib
from pathlib import Path

import jsii
from aws_cdk import AssetHashType, BundlingOptions, DockerImage, ILocalBundling
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = lambda_.Runtime.PYTHON_3_12
ARCHITECTURE = lambda_.Architecture.ARM_64
PIP_PLATFORM = ("--platform", "manylinux2014_aarch64", "--implementation", "cp", "--python-version", "3.12")


def runtime_requirements() -> list[str]:
    """The pinned ``runtime`` dependency group of pyproject.toml: what the functions import."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return [str(requirement) for requirement in project["dependency-groups"]["runtime"]]


@jsii.implements(ILocalBundling)
class PipBundling:
    """Installs the runtime requirements as Linux arm64 wheels into the layer's ``python/``."""

    def __init__(self, requirements: list[str]) -> None:
        self._requirements = requirements

    def try_bundle(self, output_dir: str, *, image: DockerImage, **_: object) -> bool:
        command = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                   "--only-binary=:all:", *PIP_PLATFORM, "--target", str(Path(output_dir) / "python"),
                   *self._requirements]  # fmt: skip
        subprocess.run(command, check=True)
        return True


def function_code() -> lambda_.Code:
    """One asset with the ``functions`` package; each handler is ``functions/<name>/<module>.handler``."""
    return lambda_.Code.from_asset(
        str(ROOT), exclude=["*", "!functions", "!functions/**", "**/__pycache__", "**/*.pyc"]
    )


def _source_layer(name: str) -> lambda_.Code:
    """A layer of this repository's own code: ``layers/<name>/python/<package>``."""
    return lambda_.Code.from_asset(str(ROOT / "layers" / name), exclude=["**/__pycache__", "**/*.pyc"])


class Layers(Construct):
    """The shared layers; ``with_dependencies=False`` (local) leaves third-party packages to the
    host's interpreter, since LocalStack runs the functions on the project's virtualenv."""

    def __init__(self, scope: Construct, construct_id: str, *, with_dependencies: bool = True) -> None:
        super().__init__(scope, construct_id)
        self.lua_redis = self._layer("LuaRedis", _source_layer("lua_redis"), "Lua scripts, store and lock")
        self.coupon_core = self._layer("CouponCore", _source_layer("coupon_core"), "shared domain and adapters")
        self.all = [self.lua_redis, self.coupon_core]
        if with_dependencies:
            self.all.insert(0, self._dependencies())

    def _dependencies(self) -> lambda_.LayerVersion:
        requirements = runtime_requirements()
        return self._layer(
            "Dependencies",
            lambda_.Code.from_asset(
                str(ROOT / "layers" / "dependencies"),
                asset_hash_type=AssetHashType.CUSTOM,
                asset_hash=hashlib.sha256(" ".join([*requirements, *PIP_PLATFORM]).encode()).hexdigest(),
                bundling=BundlingOptions(
                    image=DockerImage.from_registry("none:never-pulled"), local=PipBundling(requirements)
                ),
            ),
            "third-party packages of the runtime dependency group",
        )

    def _layer(self, name: str, code: lambda_.Code, description: str) -> lambda_.LayerVersion:
        return lambda_.LayerVersion(
            self,
            name,
            code=code,
            compatible_runtimes=[RUNTIME],
            compatible_architectures=[ARCHITECTURE],
            description=description,
        )
