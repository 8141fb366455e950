"""One lock of every Python dependency (uv.lock): it agrees with pyproject.toml, every install
from it checks each file's hash, and the Lambda layer built from it twice is the same files."""

from __future__ import annotations

import base64
import hashlib
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from aws_cdk import DockerImage

from coupon_cdk import locked
from coupon_cdk.code import LAMBDA_PLATFORM, LockedBundling, target_platform

NO_IMAGE = DockerImage.from_registry("none:never-pulled")


def _check(project: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [locked.uv(), "lock", "--check", "--python", sys.executable, "--directory", str(project)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip


def test_the_lock_agrees_with_pyproject_and_a_change_to_a_pin_is_caught(tmp_path):
    assert _check(locked.ROOT).returncode == 0, _check(locked.ROOT).stderr
    for name in ("pyproject.toml", "uv.lock"):
        shutil.copy(locked.ROOT / name, tmp_path / name)
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('"ruff==0.17.6"', '"ruff==0.17.5"'))

    changed = _check(tmp_path)

    assert changed.returncode != 0
    assert "needs to be updated" in changed.stderr


def _files(tree: Path) -> dict[str, str]:
    return {
        str(p.relative_to(tree)): hashlib.sha256(p.read_bytes()).hexdigest() for p in tree.rglob("*") if p.is_file()
    }


def _bundled(output: Path) -> Path:
    assert LockedBundling(LAMBDA_PLATFORM).try_bundle(str(output), image=NO_IMAGE)
    return output


@pytest.fixture(scope="module")
def lambda_layer(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The layer as ``cdk deploy`` bundles it for Lambda, built once for the tests that read it."""
    return _bundled(tmp_path_factory.mktemp("layer"))


def test_the_layer_built_twice_from_the_lock_is_the_same_files(lambda_layer, tmp_path):
    first, second = lambda_layer, _bundled(tmp_path / "second")

    built = _files(first)
    assert built == _files(second)
    assert any(name.endswith("-aarch64-linux-gnu.so") for name in built)  # Lambda's arm64 wheels
    versions = dict(
        p.name.removesuffix(".dist-info").lower().rsplit("-", 1) for p in (first / "python").glob("*.dist-info")
    )
    locked_versions = dict(re.findall(r"^([a-z0-9_.-]+)==(\S+)", locked.requirements("runtime"), re.MULTILINE))
    assert versions == {name.replace("-", "_").replace(".", "_"): version for name, version in locked_versions.items()}


def test_the_local_and_the_lambda_layers_hold_the_same_versions(lambda_layer, tmp_path):
    """LocalStack's layer is built for this host's machine, AWS's for arm64, from the same lock."""
    locked.install("runtime", target=tmp_path, platform=target_platform(local=True))
    lambdas = {p.name for p in (lambda_layer / "python").glob("*.dist-info")}

    assert {p.name for p in tmp_path.glob("*.dist-info")} == lambdas


def test_a_file_whose_hash_differs_from_the_lock_is_refused(tmp_path, monkeypatch):
    pins = locked.requirements("runtime")
    six = re.search(r"^six==.*?(?=^\S)", pins, flags=re.MULTILINE | re.DOTALL)
    assert six is not None
    tampered = pins.replace(six[0], re.sub(r"sha256:[0-9a-f]{64}", "sha256:" + "0" * 64, six[0]))
    monkeypatch.setattr(locked, "requirements", lambda group: tampered)

    with pytest.raises(subprocess.CalledProcessError):
        locked.install("runtime", target=tmp_path / "layer", platform=LAMBDA_PLATFORM)
    assert not list((tmp_path / "layer").glob("six*"))


def test_every_file_two_packages_of_the_venv_ship_is_the_one_aws_cdk_lib_ships():
    """aws-cdk-lib and aws-cdk.cloud-assembly-schema ship the same module, and the one installed
    last wins (aws/aws-cdk#38482; with the schema package's, the synth fails on an unknown jsii
    type): make venv installs aws-cdk-lib again, alone, after the rest."""
    site = Path(sysconfig.get_paths()["purelib"])
    owners: dict[str, dict[str, str]] = {}
    for record in site.glob("*.dist-info/RECORD"):
        for line in record.read_text().splitlines():
            path, digest, *_ = [*line.rsplit(",", 2), "", ""]
            if digest.startswith("sha256="):
                owners.setdefault(path, {})[record.parent.name] = digest
    shared = {path: by for path, by in owners.items() if len(by) > 1}
    assert "aws_cdk/cloud_assembly_schema/__init__.py" in shared
    for path, by in shared.items():
        lib = next((digest for owner, digest in by.items() if owner.startswith("aws_cdk_lib-")), None)
        assert lib is not None, (path, sorted(by))
        installed = base64.urlsafe_b64encode(hashlib.sha256((site / path).read_bytes()).digest()).rstrip(b"=").decode()
        assert lib == f"sha256={installed}", path
