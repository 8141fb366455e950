"""The docs stay readable: each under its word budget (``wc -w``: the README a front door, the
architecture a map, the benchmarks the current figure per decision), all of them under one total,
and no line of prose past 200 characters (a table row, a code block or a link reference may)."""

from __future__ import annotations

import re

from tests.policy.documents import DOCUMENTS, ROOT, markdown_lines

WORD_BUDGET = {
    "README.md": 750,
    "docs/architecture.md": 2_800,
    "docs/design.md": 5_500,
    "docs/benchmarks.md": 2_500,
    "docs/deploy.md": 2_500,
    "docs/operations.md": 3_000,
    "docs/frontend.md": 900,
}
TOTAL_BUDGET = 18_000
PROSE_LINE = 200
NOT_PROSE = re.compile(r"^\s*(\||\[[^\]]+\]:\s)")  # a table row, a link reference


def prose_lines(text: str) -> list[tuple[int, str]]:
    """The lines of a Markdown text outside fenced code blocks, tables and link references."""
    return [(number, line) for number, line, fenced in markdown_lines(text) if not fenced and not NOT_PROSE.match(line)]


def test_each_document_stays_within_its_budget_and_all_within_theirs():
    words = {doc: len((ROOT / doc).read_text().split()) for doc in WORD_BUDGET}
    over = [f"{doc} has {count:,} words, over its {WORD_BUDGET[doc]:,}" for doc, count in words.items()
            if count > WORD_BUDGET[doc]]  # fmt: skip
    assert not over, "\n".join(over)
    assert sum(words.values()) <= TOTAL_BUDGET, f"{sum(words.values()):,} words in all, over {TOTAL_BUDGET:,}"
    assert set(WORD_BUDGET) == {str(path.relative_to(ROOT)) for path in DOCUMENTS if path.suffix == ".md"}


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
