"""The docs a newcomer reads first stay readable in one sitting: the README is a front door, the
architecture a map and the benchmarks one section per benchmark, each under a word budget, and no
line of prose runs past 200 characters (a table row, a code block or a link reference may)."""

from __future__ import annotations

import re

import pytest

from tests.policy.documents import DOCUMENTS, ROOT, markdown_lines

WORD_BUDGET = {"README.md": 1_200, "docs/architecture.md": 5_000, "docs/benchmarks.md": 5_000}
PROSE_LINE = 200
NOT_PROSE = re.compile(r"^\s*(\||\[[^\]]+\]:\s)")  # a table row, a link reference


def prose_lines(text: str) -> list[tuple[int, str]]:
    """The lines of a Markdown text outside fenced code blocks, tables and link references."""
    return [(number, line) for number, line, fenced in markdown_lines(text) if not fenced and not NOT_PROSE.match(line)]


@pytest.mark.parametrize("doc", sorted(WORD_BUDGET))
def test_a_first_read_stays_within_its_budget(doc: str):
    words = len((ROOT / doc).read_text().split())
    assert words <= WORD_BUDGET[doc], f"{doc} has {words} words, over its {WORD_BUDGET[doc]}"


def test_no_line_of_prose_runs_past_200_characters():
    found = [
        f"{path.relative_to(ROOT)}:{number}: {len(line)} characters"
        for path in DOCUMENTS
        for number, line in prose_lines(path.read_text())
        if len(line) > PROSE_LINE
    ]
    assert not found, "\n".join(found)


def test_prose_is_told_from_code_tables_and_references():
    text = "a sentence\n```\ncode\n```\n| a | row |\n[ref]: https://example.com\nmore prose"
    assert [line for _, line in prose_lines(text)] == ["a sentence", "more prose"]
