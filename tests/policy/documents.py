"""The project's documents as the doc tests read them: README.md and docs/*.md, line by line,
each line marked as inside a fenced code block or not."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def markdown_lines(text: str) -> Iterator[tuple[int, str, bool]]:
    """Each line of a Markdown text but the fences themselves: its number, the line, and whether
    it is inside a fenced code block."""
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        else:
            yield number, line, fenced
