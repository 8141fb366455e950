"""Lambda code and layers: the functions package, the two shared layers, and third-party
dependencies bundled locally with pip for the Lambda platform (never with Docker), each with its
bytecode compiled for the interpreter that runs it (``bytecode.py``)."""

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

from coupon_cdk.bytecode import INVALIDATION_MODE, CompiledCopy, compile_tree, runtime_python

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = lambda_.Runtime.PYTHON_3_12
ARCHITECTURE = lambda_.Architecture.ARM_64
PYTHON_VERSION = RUNTIME.name.removeprefix("python")  # "3.12": its bytecode is compiled by that version
PIP_PLATFORM = ("--platform", "manylinux2014_aarch64", "--implementation", "cp", "--python-version", PYTHON_VERSION)
NO_DOCKER = DockerImage.from_registry("none:never-pulled")  # every asset is bundled locally


def runtime_requirements() -> list[str]:
    """The pinned ``runtime`` dependency group of pyproject.toml: what the functions import."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return [str(requirement) for requirement in project["dependency-groups"]["runtime"]]


@jsii.implements(ILocalBundling)
class PipBundling:
    """Installs the runtime requirements as Linux arm64 wheels into the layer's ``python/``, and
    compiles them for the runtime (pip would compile them for the interpreter running it)."""

    def __init__(self, requirements: list[str]) -> None:
        self._requirements = requirements

    def try_bundle(self, output_dir: str, *, image: DockerImage, **_: object) -> bool:
        target = Path(output_dir) / "python"
        command = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-compile",
                   "--only-binary=:all:", *PIP_PLATFORM, "--target", str(target), *self._requirements]  # fmt: skip
        subprocess.run(command, check=True)
        compile_tree(target, runtime_python(PYTHON_VERSION))
        return True


def _compiled(source: Path, target: str, *, local: bool) -> lambda_.Code:
    """``source`` at ``target`` in the asset, compiled for the runtime's Python (``local``: for
    this host's, which runs the functions on LocalStack)."""
    bundling = BundlingOptions(image=NO_DOCKER, local=CompiledCopy(source, target, None if local else PYTHON_VERSION))
    return lambda_.Code.from_asset(str(source), exclude=["**/__pycache__", "**/*.pyc"], bundling=bundling)


def function_code(*, local: bool = False) -> lambda_.Code:
    """One asset with the ``functions`` package; each handler is ``functions/<name>/<module>.handler``.

    ``local=True``: compiled for this host's interpreter, which runs the functions on LocalStack.
    """
    return _compiled(ROOT / "functions", "functions", local=local)


def _source_layer(name: str, *, local: bool) -> lambda_.Code:
    """A layer of this repository's own code: ``layers/<name>/python/<package>``."""
    return _compiled(ROOT / "layers" / name, ".", local=local)


class Layers(Construct):
    """The shared layers; ``local=True`` (LocalStack runs the functions on the project's
    virtualenv) leaves third-party packages to the host's interpreter and compiles for it."""

    def __init__(self, scope: Construct, construct_id: str, *, local: bool = False) -> None:
        super().__init__(scope, construct_id)
        lua_redis, coupon_core = _source_layer("lua_redis", local=local), _source_layer("coupon_core", local=local)
        self.lua_redis = self._layer("LuaRedis", lua_redis, "Lua scripts, store and lock")
        self.coupon_core = self._layer("CouponCore", coupon_core, "shared domain and adapters")
        self.all = [self.lua_redis, self.coupon_core]
        if not local:
            self.all.insert(0, self._dependencies())

    def _dependencies(self) -> lambda_.LayerVersion:
        requirements = runtime_requirements()
        return self._layer(
            "Dependencies",
            lambda_.Code.from_asset(
                str(ROOT / "layers" / "dependencies"),
                asset_hash_type=AssetHashType.CUSTOM,
                asset_hash=hashlib.sha256(
                    " ".join([*requirements, *PIP_PLATFORM, INVALIDATION_MODE]).encode()
                ).hexdigest(),
                bundling=BundlingOptions(image=NO_DOCKER, local=PipBundling(requirements)),
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
