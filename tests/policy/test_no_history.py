"""History stays in git: no document, docstring or comment of what ships, runs or measures the
system names one of this project's issues or heads a section with a date. An upstream project's
issue (``aws/aws-cdk#38482``) is a citation, not history, and passes."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PLACES = ("functions/", "layers/", "cdk/", "coupon_client/", "bench/", "local/", "docs/", "README.md", "Makefile")
TEXT = (".py", ".md", ".lua", ".toml", ".json", "Makefile")
OUR_ISSUE = re.compile(r"\b[Ii]ssues?\s+#?\d+|(?<![\w/.-])(?<!: )#\d{1,4}\b(?![0-9a-fA-F;])")  # not a colour: #222;
DATED_HEADING = re.compile(r"^#+ .*(\b(19|20)\d\d-\d\d-\d\d\b|\b[Ii]ssue \d+)")


def _files() -> list[Path]:
    listed = subprocess.run(["git", "ls-files", *PLACES], cwd=ROOT, capture_output=True, text=True, check=True)
    return [ROOT / line for line in listed.stdout.splitlines() if line.endswith(TEXT) and (ROOT / line).exists()]


def test_no_file_names_one_of_our_issues():
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()[:100]}"
        for path in _files()
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1)
        if OUR_ISSUE.search(line) and not path.name.endswith(".json")
    ]
    assert not found, "\n".join(found)


def test_no_heading_is_a_date_or_an_issue():
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line}"
        for path in _files()
        if path.suffix == ".md"
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if DATED_HEADING.search(line)
    ]
    assert not found, "\n".join(found)


def test_the_patterns_catch_what_they_are_for():
    assert OUR_ISSUE.search("as issue 38 measured")
    assert OUR_ISSUE.search("fixed in #12")
    assert not OUR_ISSUE.search("aws/aws-cdk#38482")
    assert not OUR_ISSUE.search("color: #222;")
    assert DATED_HEADING.search("### Before TLS (2026-11-30)")
    assert DATED_HEADING.search("## After issue 14")
    assert not DATED_HEADING.search("## Reserve: Lua against the alternatives")
