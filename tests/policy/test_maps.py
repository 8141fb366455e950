"""The maps a newcomer reads first stay true: each package's docstring names everything in its
folder (a folder of the Lambda code without an ``__init__.py``, a namespace package, is mapped by a
section of its top folder's README.md instead), and README's layout table names every top-level
folder, every function and every part of ``local/``."""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CODE = ("coupon_client", "functions", "layers", "cdk", "local", "bench")  # what ships, runs or measures the system
NOT_CODE = {"__pycache__", "__init__.py"}


def _tracked() -> list[Path]:
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [ROOT / line for line in listed.splitlines()]


def _packages() -> list[Path]:
    return sorted(
        path.parent
        for path in _tracked()
        if path.name == "__init__.py" and path.relative_to(ROOT).parts[0] in CODE and path.exists()
    )


def _children(package: Path) -> list[str]:
    """The modules and folders of a package, by name: what its docstring must name."""
    names = []
    for child in sorted(package.iterdir()):
        if child.name in NOT_CODE or child.name.startswith("."):
            continue
        if child.is_dir() or child.suffix == ".py":
            names.append(child.stem if child.suffix == ".py" else child.name)
    return names


def _named(text: str, name: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(name)}\b", text) is not None


def test_a_packages_docstring_names_everything_in_its_folder():
    missing = []
    for package in _packages():
        docstring = ast.get_docstring(ast.parse((package / "__init__.py").read_text())) or ""
        unnamed = [name for name in _children(package) if not _named(docstring, name)]
        missing += [f"{package.relative_to(ROOT)}/__init__.py does not name {unnamed}"] if unnamed else []
    assert not missing, "\n".join(missing)


# The Lambda code's top folders whose packages have no __init__.py: each README.md maps them.
MAPPED_BY_README = ("functions", "layers/coupon_core/python/coupon_core", "layers/lua_redis/python/lua_redis")
NOT_PACKAGES = {"adapters/postgres/migrations/versions"}  # Alembic loads its revisions by path


def _sections(readme: Path) -> dict[str, str]:
    """A map's sections by the folder each maps, relative to the README's: "" for the text
    before the first ``## `folder/` `` heading."""
    parts = re.split(r"^## `([\w/]+)/`$", readme.read_text(), flags=re.MULTILINE)
    return {"": parts[0], **dict(zip(parts[1::2], parts[2::2], strict=True))}


def test_a_namespace_packages_section_of_its_readme_names_everything_in_its_folder():
    missing = []
    for top in MAPPED_BY_README:
        sections = _sections(ROOT / top / "README.md")
        folders = {path.parent for path in _tracked() if path.suffix == ".py" and (ROOT / top) in path.parents}
        for folder in sorted(folders | {ROOT / top}):
            if (folder / "__init__.py").exists():
                continue  # a regular package: its docstring is its map
            where = "" if folder == ROOT / top else str(folder.relative_to(ROOT / top))
            if where in NOT_PACKAGES:
                continue
            section = sections.get(where)
            if section is None:
                missing.append(f"{top}/README.md has no section `{where}/`")
                continue
            listed = [f"{child.name}/" if child.is_dir() else child.name for child in sorted(folder.iterdir())
                      if child.name not in NOT_CODE and (child.is_dir() or child.suffix == ".py")]  # fmt: skip
            unnamed = [name for name in listed if f"`{name}`" not in section]
            missing += [f"{top}/README.md's section `{where or '.'}` does not name {unnamed}"] if unnamed else []
    assert not missing, "\n".join(missing)


def _layout_table() -> str:
    readme = (ROOT / "README.md").read_text()
    return readme.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]


def test_the_readme_layout_names_every_top_level_folder_function_and_part_of_local():
    tracked = [path.relative_to(ROOT) for path in _tracked()]
    top = {path.parts[0] for path in tracked if len(path.parts) > 1 and not path.parts[0].startswith(".")}
    functions = {
        f"functions/{path.parts[1]}" for path in tracked if path.parts[0] == "functions" and len(path.parts) > 2
    }
    local = {f"local/{path.parts[1]}" for path in tracked if path.parts[0] == "local" and len(path.parts) > 2}
    table = _layout_table()
    missing = sorted(
        name
        for name in top | functions | local
        if f"`{name}/`" not in table and f"`{name.split('/')[-1]}/`" not in table
    )
    assert not missing, f"README's layout table does not name {missing}"
