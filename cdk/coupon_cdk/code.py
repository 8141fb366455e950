"""Lambda code and layers: the functions package, the two shared layers, and third-party
dependencies bundled locally with pip for the Lambda platform (never with Docker), each with its
bytecode compiled for the interpreter that runs it (``bytecode.py``)."""

from __future__ import annotations

import hashlib
import platform
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
LAMBDA_PLATFORM = "manylinux2014_aarch64"  # Lambda's arm64
PIP_PLATFORM = ("--platform", LAMBDA_PLATFORM, "--implementation", "cp", "--python-version", PYTHON_VERSION)


def pip_platform(*, local: bool) -> tuple[str, ...]:
    """pip's target of the dependencies layer: Lambda's arm64, or (``local``) this host's machine,
    whose Python runs the functions on LocalStack; the same Python version and pins either way."""
    if not local:
        return PIP_PLATFORM
    return ("--platform", f"manylinux2014_{platform.machine()}", *PIP_PLATFORM[2:])


NO_DOCKER = DockerImage.from_registry("none:never-pulled")  # every asset is bundled locally


def runtime_requirements() -> list[str]:
    """The pinned ``runtime`` dependency group of pyproject.toml: what the functions import."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return [str(requirement) for requirement in project["dependency-groups"]["runtime"]]


@jsii.implements(ILocalBundling)
class PipBundling:
    """Installs the runtime requirements as Linux wheels of ``target_platform`` into the layer's
    ``python/``, and compiles them for the runtime (pip would compile them for the interpreter
    running it)."""

    def __init__(self, requirements: list[str], target_platform: tuple[str, ...] = PIP_PLATFORM) -> None:
        self._requirements = requirements
        self._platform = target_platform

    def try_bundle(self, output_dir: str, *, image: DockerImage, **_: object) -> bool:
        target = Path(output_dir) / "python"
        command = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-compile",
                   "--only-binary=:all:", *self._platform, "--target", str(target), *self._requirements]  # fmt: skip
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
    """The three layers every function gets: the third-party packages of the runtime dependency
    group, and our two. ``local=True`` (LocalStack runs the functions on this host's bare Python
    3.12, nothing of the development venv on its path) bundles the same pins through the same
    steps for this host's machine instead of Lambda's arm64."""

    def __init__(self, scope: Construct, construct_id: str, *, local: bool = False) -> None:
        super().__init__(scope, construct_id)
        lua_redis, coupon_core = _source_layer("lua_redis", local=local), _source_layer("coupon_core", local=local)
        self.lua_redis = self._layer("LuaRedis", lua_redis, "Lua scripts, store and lock")
        self.coupon_core = self._layer("CouponCore", coupon_core, "shared domain and adapters")
        self.all = [self._dependencies(local=local), self.lua_redis, self.coupon_core]

    def _dependencies(self, *, local: bool) -> lambda_.LayerVersion:
        requirements, target_platform = runtime_requirements(), pip_platform(local=local)
        return self._layer(
            "Dependencies",
            lambda_.Code.from_asset(
                str(ROOT / "layers" / "dependencies"),
                asset_hash_type=AssetHashType.CUSTOM,
                asset_hash=hashlib.sha256(
                    " ".join([*requirements, *target_platform, INVALIDATION_MODE]).encode()
                ).hexdigest(),
                bundling=BundlingOptions(image=NO_DOCKER, local=PipBundling(requirements, target_platform)),
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
