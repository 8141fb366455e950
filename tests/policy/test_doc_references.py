"""Every file, folder and dotted name that README.md, docs/*.md, the package docstrings and maps give
in backticks exists: a path is a tracked file or folder (named whole, or by its last parts: the
documents say ``domain/issuing.py`` where the folder is plain from the text), and a dotted name
resolves, ``module.name`` or ``Class.member`` of the project's own code, or an importable name of
a library. A document that names a thing a change removed or renamed fails here, in the commit
that did it.
"""

from __future__ import annotations

import ast
import fnmatch
import importlib
import io
import re
import subprocess
import tokenize
from collections import defaultdict
from functools import cache
from pathlib import Path
from typing import Any, get_args

from coupon_cdk.config import EnvironmentConfig
from tests.policy.documents import DOCUMENTS, ROOT

SOURCE_ROOTS = ("layers/coupon_core/python", "layers/lua_redis/python", "cdk", ".")
CODE_ROOTS = ("functions/", "layers/", "cdk/")  # their docstrings and comments are documents too

# Named in backticks, and not code or a file of this repository: what each one is.
NOT_OURS = {
    "application/json", "text/csv",  # media types
    "Monitoring/Dashboard",  # a construct's path in the synthesized template
    "coupon.issue.v1", "coupon.events.v1",  # Kafka topics
    "coupon.issue.rejected", "coupon.issue.malformed",  # dead letters' kinds
    "coupon_issues.expires_at", "source.release",  # a column, and a key of a JSONB column
    "rds.force_ssl",  # a PostgreSQL parameter of RDS
    "listener.name.client_iam.max.connections",  # a dynamic configuration of an MSK broker
    "KafkaBatchInfo.recordsInfo",  # a field of the MSK event source mapping's on-failure letter
    "Sandbox.Timedout",  # a Lambda error type
    "stack.env",  # written by make up in .local/
    "cdk.context.json",  # written by the CDK CLI, ignored by git
    "kafka.t3.small",  # an MSK broker type
    "localstack.lambda.runtime_executor",  # the plugin namespace of LocalStack's own environment
    "CloudWatchEMFProvider.add_metric",  # Powertools' class, named by its short name
    "alembic.ini",  # named as what the migration does without
    "requestContext.requestId",  # a field of API Gateway's proxy event
    "requestContext.requestTimeEpoch",  # another
}  # fmt: skip
# Where the stack writes at run time: named in the documents, never tracked.
RUN_TIME_PLACES = (".local/", ".hypothesis/", "/proc/", "/tmp/", "<", "...", "node_modules/")


def _tracked() -> list[str]:
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [line for line in listed.splitlines() if (ROOT / line).exists()]


@cache
def _paths() -> frozenset[str]:
    """Every tracked file and every folder that holds one, relative to the root."""
    files = _tracked()
    folders = {str(Path(file).parents[i]) for file in files for i in range(len(Path(file).parts) - 1)}
    return frozenset(files) | frozenset(folders)


def _path_exists(named: str) -> bool:
    """A tracked file or folder whose path is ``named`` or ends with it (``*`` a wildcard)."""
    named = named.rstrip("/")
    return any(fnmatch.fnmatchcase(path, named) or fnmatch.fnmatchcase(path, f"*/{named}") for path in _paths())


@cache
def _definitions() -> dict[str, dict[str, set[str]]]:
    """``module`` -> the names it defines at top level, under its dotted path from a source root
    and every shorter tail of it (``adapters.postgres``, ``issuing``); ``Class`` -> its members
    (methods, fields, class attributes, and its project bases' members); of the project's code."""
    modules: dict[str, set[str]] = defaultdict(set)
    classes: dict[str, set[str]] = defaultdict(set)
    bases: dict[str, set[str]] = defaultdict(set)
    for file in _tracked():
        if not file.endswith(".py"):
            continue
        tree = ast.parse((ROOT / file).read_text())
        names = _defined(tree.body)
        for source_root in SOURCE_ROOTS:
            prefix = "" if source_root == "." else f"{source_root}/"
            if file.startswith(prefix):
                parts = file.removeprefix(prefix).removesuffix(".py").removesuffix("/__init__").split("/")
                for start in range(len(parts)):
                    modules[".".join(parts[start:])] |= names
                for end in range(1, len(parts)):  # its packages, a namespace package's folder too
                    for start in range(end):
                        modules.setdefault(".".join(parts[start:end]), set())
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                classes[node.name] |= _defined(node.body)
                bases[node.name] |= {base.id for base in node.bases if isinstance(base, ast.Name)}
    for name in list(classes):
        ancestors, seen = [name], set()
        while ancestors:
            ancestor = ancestors.pop()
            if ancestor not in seen:
                seen.add(ancestor)
                classes[name] |= classes.get(ancestor, set())
                ancestors += bases.get(ancestor, ())
    return {"modules": modules, "classes": classes}


def _defined(body: list[ast.stmt]) -> set[str]:
    names: set[str] = set()
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {target.id for target in node.targets if isinstance(target, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.ImportFrom):  # re-exported names (a package's __init__)
            names |= {alias.asname or alias.name for alias in node.names}
    return names


def _name_exists(named: str) -> bool:
    """``module.name``, ``package.module``, ``Class.member``, or a library's importable name."""
    parts = named.split(".")
    defined = _definitions()
    for split in range(len(parts) - 1, 0, -1):
        owner, rest = ".".join(parts[:split]), parts[split:]
        if owner in defined["modules"] and (len(rest) == 1 and rest[0] in defined["modules"][owner]):
            return True
        if owner in defined["modules"] and ".".join(parts) in defined["modules"]:
            return True
    if parts[0] in defined["classes"] and len(parts) == 2:
        return parts[1] in defined["classes"][parts[0]]
    return named in defined["modules"] or _importable(named)


def _importable(named: str) -> bool:
    parts = named.split(".")
    for split in range(len(parts), 0, -1):
        try:
            value = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        try:
            for attribute in parts[split:]:
                value = getattr(value, attribute)
        except AttributeError:
            return False
        return True
    return False


def _references() -> list[tuple[str, str]]:
    """(where, what) for everything named in backticks that looks like a path or a dotted name."""
    found: list[tuple[str, str]] = []
    maps = [ROOT / file for file in _tracked() if file.startswith(CODE_ROOTS) and file.endswith("/README.md")]
    for document in [*DOCUMENTS, *maps]:
        found += [(document.name, text) for text in re.findall(r"`([^`\n]+)`", document.read_text())]
    for file in _tracked():
        if file.endswith("__init__.py"):
            docstring = ast.get_docstring(ast.parse((ROOT / file).read_text())) or ""
            found += [(file, line.split()[0]) for line in docstring.splitlines() if re.match(r"\S+(\.py|/)\s", line)]
            if not file.startswith(CODE_ROOTS):
                found += [(file, text) for text in re.findall(r"`+([^`\n]+?)`+", docstring)]
        if file.endswith(".py") and file.startswith(CODE_ROOTS):
            for prose in _prose(ROOT / file):
                found += [(file, text) for text in re.findall(r"`+([^`\n]+?)`+", prose)]
                found += [(file, text) for text in _BARE_PATH.findall(re.sub(r"`+[^`\n]+?`+", "", prose))]
    return [(where, text) for where, text in found if _is_reference(text)]


def _prose(file: Path) -> list[str]:
    """Every docstring (module, class, function) and every comment of a Python file."""
    source = file.read_text()
    texts = [
        ast.get_docstring(node) or ""
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
    ]
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return texts + [token.string for token in tokens if token.type == tokenize.COMMENT]


_EXTENSIONS = "py|md|lua|json|toml|ini|txt|sh|pem|cfg|lock|js|html"
# A path in prose without backticks: folders and a file name (docs/design.md, functions/intake/app.py).
_BARE_PATH = re.compile(rf"(?<![\w/.<:-])((?:[\w-]+/)+[\w*-]+\.(?:{_EXTENSIONS}))\b")
_PATH = re.compile(rf"[\w.*<>/-]+(/|\.({_EXTENSIONS}))")  # a file or folder: scripts/*.lua, cdk/
_IN_FILE = re.compile(r"(?P<file>[\w./-]+\.py)(::|:)(?P<name>\w+)")  # issue_route.py:request_coupon, a test's node id
_IN_MODULE = re.compile(r"(?P<module>[\w./-]+/\w+)\.(?P<name>\w+)")  # functions/relay/app.handler
_DOTTED = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)+")  # answers.REFUSALS, IssueService.issue, json.loads


def _is_reference(text: str) -> bool:
    text = text.removesuffix("()")
    if " " in text or "://" in text or text.startswith(RUN_TIME_PLACES) or text in NOT_OURS:
        return False
    return any(pattern.fullmatch(text) for pattern in (_PATH, _IN_FILE, _IN_MODULE, _DOTTED))


def _exists(text: str) -> bool:
    text = text.removesuffix("()")
    if in_file := _IN_FILE.fullmatch(text):
        file, name = in_file["file"], in_file["name"]
        if "::" in text:  # a pytest node id: the file, and its test
            return (ROOT / file).is_file() and f"def {name}(" in (ROOT / file).read_text()
        return _path_exists(file) and _name_exists(f"{Path(file).stem}.{name}")
    if _PATH.fullmatch(text):
        return _path_exists(text)
    if in_module := _IN_MODULE.fullmatch(text):
        module = in_module["module"]
        return _path_exists(f"{module}.py") and _name_exists(f"{Path(module).name}.{in_module['name']}")
    return _name_exists(text) or _environment_key_exists(text)


def _environment_key_exists(text: str) -> bool:
    """``kafka.brokerStorageGb``: a key of an environment of either kind in cdk.json, as
    coupon_cdk.config reads it."""
    return any(_is_key_of(kind, text) for kind in get_args(EnvironmentConfig))


def _is_key_of(model: Any, text: str) -> bool:
    for alias in text.split("."):
        fields = {field.alias: field for field in getattr(model, "model_fields", {}).values()}
        if alias not in fields:
            return False
        annotation = fields[alias].annotation
        model = next((kind for kind in (annotation, *get_args(annotation)) if isinstance(kind, type)), None)
    return True


REFERENCES = _references()


def test_the_documents_name_files_and_code():
    assert len(REFERENCES) > 300  # the extraction finds what the documents name (about 400 today)


def test_what_a_document_names_exists():
    missing = [f"{where} names `{named}`, which does not exist" for where, named in sorted(set(REFERENCES))
               if not _exists(named)]  # fmt: skip
    assert not missing, "\n".join(missing)
