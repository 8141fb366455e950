"""The embedded PostgreSQL starts from a checkout in a private folder, and says why when it cannot.

As root (a fresh machine, a dev container, CI), PostgreSQL runs as a system user of its own, which
cannot reach a checkout under ``/root`` or a ``mktemp -d`` folder (mode 700): the install is then
copied where it can, and that copy must be complete, checked, and safe to prepare twice at once.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from coupon_core.adapters.postgres.engine import engine_for_url
from local.stack import postgres, postgres_install
from local.stack.postgres import POSTGRES_SYSTEM_USER, _ensure_system_user, start_postgres
from local.stack.processes import ServiceError, package_dir

as_root = pytest.mark.skipif(
    os.geteuid() != 0, reason="only root runs PostgreSQL as a system user of its own, from a copy it can reach"
)


@pytest.fixture
def shared_root(monkeypatch) -> Iterator[Path]:
    """A system temporary folder of the test's own (mode 755, as /tmp is reachable), so that the
    machine's shared copy is neither used nor touched."""
    root = Path(tempfile.mkdtemp(prefix="coupon-test-tmp-"))
    root.chmod(0o755)
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def private_install(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel's install as a checkout in a home directory holds it: its site-packages (the
    package and the libraries auditwheel put beside it) under a folder of mode 700. One for the
    module (41 MB to copy): the tests only read it, and copy it elsewhere."""
    home = tmp_path_factory.mktemp("private") / "home"
    site = home / "checkout" / ".venv" / "site-packages"
    wheel = package_dir(postgres_install.PACKAGE) / "pginstall"
    shutil.copytree(wheel, site / postgres_install.PACKAGE / "pginstall", symlinks=True)
    shutil.copytree(
        wheel.parent.parent / postgres_install.VENDORED_LIBRARIES, site / postgres_install.VENDORED_LIBRARIES
    )
    home.chmod(0o700)
    return site / postgres_install.PACKAGE / "pginstall"


@pytest.fixture
def system_user() -> str:
    return _ensure_system_user(POSTGRES_SYSTEM_USER)


def _starts_as(install: Path, user: str) -> bool:
    return all(
        subprocess.run(
            [str(install / "bin" / name), "--version"], user=user, capture_output=True, check=False
        ).returncode
        == 0
        for name in postgres_install.CHECKED_BINARIES
    )


@as_root
def test_an_install_reached_only_through_a_private_folder_starts_postgres(
    private_install, shared_root, system_user, tmp_path, monkeypatch
):
    assert not postgres_install.reachable(private_install / "bin", system_user)  # the case itself

    service = start_postgres(tmp_path / "scratch", install=private_install)
    for name, value in service.client_environment.items():  # its CA, whether or not a session's server set it
        monkeypatch.setenv(name, value)
    try:
        with engine_for_url(service.url).connect() as connection:
            assert connection.execute(text("SELECT current_database()")).scalar_one() == "coupons"
    finally:
        service.stop()
    copy = postgres_install.copy_location(shared_root)
    assert copy.is_dir()
    assert stat.S_IMODE(copy.stat().st_mode) == 0o755


def _old_copy_without_libraries(install: Path, copy: Path) -> None:
    shutil.copytree(install, copy / postgres_install.PACKAGE / "pginstall", symlinks=True)  # RPATH finds no libpq
    copy.chmod(0o755)


def _complete_copy_others_can_write(install: Path, copy: Path) -> None:
    stage = postgres_install._staged_copy(install, copy.parent)
    stage.rename(copy)
    copy.chmod(0o777)


def _the_first_layout_copied_pginstall_alone(install: Path, copy: Path) -> None:
    shutil.copytree(install, copy, symlinks=True)
    copy.chmod(0o755)


@as_root
@pytest.mark.parametrize(
    "spoil", [_old_copy_without_libraries, _complete_copy_others_can_write, _the_first_layout_copied_pginstall_alone]
)
def test_a_broken_or_untrusted_copy_is_replaced_not_trusted(private_install, shared_root, system_user, spoil):
    copy = postgres_install.copy_location(shared_root)
    spoil(private_install, copy)
    (copy / "spoiled").touch()

    install = postgres_install.runnable_install(private_install, system_user, shared_root=shared_root)

    assert _starts_as(install, system_user)
    assert not (copy / "spoiled").exists()
    assert stat.S_IMODE(copy.stat().st_mode) == 0o755
    assert sorted(path.name for path in shared_root.iterdir()) == [copy.name]  # nothing staged or stale left


def _prepare(install: Path, user: str, shared_root: Path, barrier: Any, results: Any) -> None:
    barrier.wait()
    try:
        results.put(str(postgres_install.runnable_install(install, user, shared_root=shared_root)))
    except Exception as exc:
        results.put(f"failed: {exc!r}")


@as_root
def test_runs_preparing_the_copy_at_once_all_get_one_complete_copy(private_install, shared_root, system_user):
    context = multiprocessing.get_context("fork")
    runs = 4
    barrier, results = context.Barrier(runs), context.Queue()
    processes = [
        context.Process(target=_prepare, args=(private_install, system_user, shared_root, barrier, results))
        for _ in range(runs)
    ]
    for process in processes:
        process.start()
    answers = [results.get(timeout=120) for _ in range(runs)]
    for process in processes:
        process.join(timeout=30)

    assert len(set(answers)) == 1, answers
    assert _starts_as(Path(answers[0]), system_user)
    assert [path.name for path in shared_root.iterdir()] == [postgres_install.copy_location(shared_root).name]


def test_a_server_that_cannot_start_names_itself_the_command_its_output_and_what_to_do(shared_root):
    scratch = shared_root / "scratch"
    (scratch / "postgres" / "data").mkdir(parents=True)
    (scratch / "postgres" / "data" / "left-over").write_text("not a database cluster")
    if os.geteuid() == 0:  # the server's user owns its data folder, as initdb would leave it
        shutil.chown(scratch / "postgres" / "data", _ensure_system_user(POSTGRES_SYSTEM_USER))

    with pytest.raises(ServiceError) as failure:
        start_postgres(scratch)

    message = str(failure.value)
    assert message.startswith("PostgreSQL did not start: `")
    assert "initdb -D " in message
    assert "exists but is not empty" in message  # initdb's own output
    assert "setting DATABASE_URL" in message


@as_root
def test_a_data_folder_moved_out_of_a_private_scratch_is_removed_once_its_scratch_is_gone(shared_root, tmp_path):
    left_over = shared_root / "coupon-postgres-0123456789ab"
    (left_over / "data").mkdir(parents=True)
    (left_over / "origin").write_text(str(tmp_path / "a scratch folder deleted since"))
    scratch = tmp_path / "scratch"

    service = start_postgres(scratch)
    service.stop()

    assert not left_over.exists()
    (moved,) = shared_root.glob("coupon-postgres-*")  # this run's, kept: started again, it keeps its data
    assert (moved / "origin").read_text() == str(scratch.resolve())
    assert (moved / "data" / "PG_VERSION").exists()


def test_a_system_user_that_cannot_be_made_is_a_service_error_that_says_so(monkeypatch):
    def useradd_fails(what, command, *, env_var, user=None):
        raise ServiceError(f"{what} did not start: `{' '.join(command)}` failed with exit status 9")

    monkeypatch.setattr(postgres, "run_setup", useradd_fails)

    with pytest.raises(ServiceError, match="useradd --system"):
        _ensure_system_user("coupon-test-user-nobody-makes")
