"""Lambda code and layers: the functions package, the two shared layers, and third-party
dependencies bundled locally from the lock for the Lambda platform (never with Docker), each with
its bytecode compiled for the interpreter that runs it (``bytecode.py``)."""

from __future__ import annotations

import platform
from pathlib import Path

import jsii
from aws_cdk import AssetHashType, BundlingOptions, DockerImage, ILocalBundling
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from coupon_cdk import locked
from coupon_cdk.bytecode import INVALIDATION_MODE, CompiledCopy, compile_tree, runtime_python

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = lambda_.Runtime.PYTHON_3_12
ARCHITECTURE = lambda_.Architecture.ARM_64
PYTHON_VERSION = RUNTIME.name.removeprefix("python")  # "3.12": its bytecode is compiled by that version
LAMBDA_PLATFORM = "aarch64-manylinux2014"  # Lambda's arm64, as uv names it (--python-platform)
RUNTIME_GROUP = "runtime"  # pyproject's dependency group of what the functions import
LAYER_PATH = "/opt/python"  # where Lambda puts a layer's python/ folder on the path


def target_platform(*, local: bool) -> str:
    """The dependencies layer's platform: Lambda's arm64, or (``local``) this host's machine,
    whose Python runs the functions on LocalStack; the same locked files' versions either way."""
    return f"{platform.machine()}-manylinux2014" if local else LAMBDA_PLATFORM


NO_DOCKER = DockerImage.from_registry("none:never-pulled")  # every asset is bundled locally


@jsii.implements(ILocalBundling)
class LockedBundling:
    """Installs the locked runtime group as Linux wheels of ``platform_name`` into the layer's
    ``python/``, every file checked against its hash in uv.lock, and compiles them for the
    runtime (the installer would compile them for the interpreter running it, or not at all)."""

    def __init__(self, platform_name: str) -> None:
        self._platform = platform_name

    def try_bundle(self, output_dir: str, *, image: DockerImage, **_: object) -> bool:
        target = Path(output_dir) / "python"
        locked.install(RUNTIME_GROUP, target=target, platform=self._platform)
        compile_tree(target, runtime_python(PYTHON_VERSION), shown_as=LAYER_PATH)
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
    3.12, nothing of the development venv on its path) bundles the same locked versions through
    the same steps for this host's machine instead of Lambda's arm64."""

    def __init__(self, scope: Construct, construct_id: str, *, local: bool = False) -> None:
        super().__init__(scope, construct_id)
        lua_redis, coupon_core = _source_layer("lua_redis", local=local), _source_layer("coupon_core", local=local)
        self.lua_redis = self._layer("LuaRedis", lua_redis, "Lua scripts, store and lock")
        self.coupon_core = self._layer("CouponCore", coupon_core, "shared domain and adapters")
        self.all = [self._dependencies(local=local), self.lua_redis, self.coupon_core]

    def _dependencies(self, *, local: bool) -> lambda_.LayerVersion:
        platform_name = target_platform(local=local)
        return self._layer(
            "Dependencies",
            lambda_.Code.from_asset(
                str(ROOT / "layers" / "dependencies"),
                # the locked files themselves: bundled again only when the lock's runtime group changes
                asset_hash_type=AssetHashType.CUSTOM,
                asset_hash=locked.fingerprint(RUNTIME_GROUP, platform_name, INVALIDATION_MODE),
                bundling=BundlingOptions(image=NO_DOCKER, local=LockedBundling(platform_name)),
            ),
            "third-party packages of the runtime dependency group, from uv.lock",
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
