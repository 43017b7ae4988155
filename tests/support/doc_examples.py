"""The docs' code blocks, found by Sybil (a well-kept executable-docs library).

Every fenced block of README.md and docs/*.md names its language, and each language has
an evaluator in tests/test_docs_examples.py. A block a reader cannot try here is marked on
the page, just above it, with the reason:

    <!-- illustrative: needs a Kubernetes cluster -->

and a block that shows part of a file of the repository says which, so the page cannot
drift from it:

    <!-- from: examples/echo/echo_flow.py -->
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from sybil import Document, Region, Sybil
from sybil.parsers.markdown.lexers import DirectiveInHTMLCommentLexer, FencedCodeBlockLexer

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
GENERATED = {ROOT / "docs" / "cli.md"}  # the CLI reference, written by `nox -s docs`
LANGUAGES = ("sh", "python", "toml", "yaml", "text")
DIRECTIVES = ("illustrative", "from")
FENCE_OPENING = re.compile(r"^[ \t]*(?:[-*+][ \t]+|\d+[.)][ \t]+)?(`{3,}|~{3,})(.*)$")


@dataclass(frozen=True)
class Block:
    """One fenced block: where it is, its language and text, and what the page says of it."""

    page: str  # relative to the repository
    line: int
    language: str
    source: str
    illustrative: str | None  # the reason, when the page marks it illustrative
    origin: str | None  # the file it is part of, when the page names one

    @property
    def name(self) -> str:
        return f"{self.page}:{self.line}"


def _code_blocks(document: Document) -> list[Region]:
    mapping = {"language": "language", "source": "source"}
    lexer = FencedCodeBlockLexer(language=r"\S+", mapping=mapping)
    return list(lexer(document))


def _directives(document: Document) -> list[Region]:
    lexer = DirectiveInHTMLCommentLexer(directive="|".join(DIRECTIVES), arguments=r"[^\n]+?")
    return list(lexer(document))


def blocks(page: Path) -> list[Block]:
    """The page's fenced blocks, each with the directives written just above it."""
    document = Sybil(parsers=[]).parse(page)
    found = []
    notes = _directives(document)
    for region in _code_blocks(document):
        above = document.text[: region.start].rstrip()
        said: dict[str, str] = {}
        for note in reversed(notes):  # the comments directly above, nothing between
            between = re.sub(r"^-+>", "", above[note.end :])  # a region ends before its -->
            if note.end < region.start and not between.strip():
                said[note.lexemes["directive"]] = note.lexemes["arguments"].strip()
                above = above[: note.start].rstrip()
        found.append(
            Block(
                page=str(page.relative_to(ROOT)),
                line=document.text.count("\n", 0, region.start) + 1,
                language=region.lexemes["language"],
                source=str(region.lexemes["source"]),
                illustrative=said.get("illustrative"),
                origin=said.get("from"),
            )
        )
    return found


def fence_count(page: Path) -> int:
    """Opening fences on the page, counted without Sybil: every one must be a block above."""
    count, inside = 0, False
    for line in page.read_text().splitlines():
        match = FENCE_OPENING.match(line)
        if match:
            count += not inside
            inside = not inside
    return count


def every_block() -> list[Block]:
    return [block for page in PAGES if page not in GENERATED for block in blocks(page)]
