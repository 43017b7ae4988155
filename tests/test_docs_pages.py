"""The site's front page lists every page of its navigation, and no page points at a
section "below" or "above" that is not there."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def _nav_pages() -> list[str]:
    text = (ROOT / "mkdocs.yml").read_text()
    nav = text[text.index("nav:") : text.index("not_in_nav:")]
    return [
        page for page in re.findall(r"([\w/-]+\.md)", nav)
        if page not in ("index.md", "cli.md") and not page.startswith("seeds/seed-")
    ]  # fmt: skip


def test_the_home_page_links_every_page_of_the_navigation() -> None:
    home = (DOCS / "index.md").read_text()
    missing = [page for page in _nav_pages() if f"]({page})" not in home]
    assert not missing, f"docs/index.md does not link: {missing}"


def test_every_relative_link_names_a_page_that_exists() -> None:
    broken = []
    for page in [ROOT / "README.md", *DOCS.rglob("*.md")]:
        for target in re.findall(r"\]\(([^)#:\s]+\.md)(?:#[^)]*)?\)", page.read_text()):
            generated = target.endswith("cli.md")  # written by `nox -s docs` from the app
            if not generated and not (page.parent / target).resolve().is_file():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert not broken, broken


def test_each_command_s_summary_is_a_whole_sentence() -> None:
    from typer.testing import CliRunner

    from grpcbench.cli.app import app

    shown = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "300"}).output
    commands = shown[shown.index("Commands") :]
    assert "..." not in commands
    assert "Run a scenario on every server kind at every concurrency level and print the" in shown


def test_a_section_named_in_quotes_is_on_the_page() -> None:
    """`see "Verdicts"` or `"Verdicts" below` names a heading of the same page; a section
    of another page is a link to it."""
    named = re.compile(r'[Ss]ee "([^"]+)"|"([A-Z][^"]{2,60})"[ ,]*\(?(?:below|above)')
    missing = []
    for page in [ROOT / "README.md", *DOCS.rglob("*.md")]:
        text = page.read_text()
        headings = {h.strip().lower() for h in re.findall(r"^#+ (.+)$", text, re.MULTILINE)}
        for match in named.finditer(text):
            title = (match.group(1) or match.group(2)).lower()
            if title not in headings:
                missing.append(f"{page.relative_to(ROOT)}: {match.group(0)}")
    assert not missing, missing


def test_help_keeps_every_bracket_of_every_option_s_help() -> None:
    """Rich reads `[...]` as markup: an extra's name in an option's help
    (`grpcbench[profile]`) must reach the screen whole, in every command's --help."""
    import typer
    from typer.testing import CliRunner

    from grpcbench.cli.app import app

    root = typer.main.get_command(app)
    checked = 0
    for name, command in root.commands.items():  # type: ignore[attr-defined]
        shown = CliRunner().invoke(app, [name, "--help"], env={"COLUMNS": "2000"}).output
        shown = " ".join(re.sub(r"[│╭╮╰╯─]", " ", shown).split())
        for param in command.params:
            for bracket in re.findall(r"\[[^\]\s]+\]", getattr(param, "help", None) or ""):
                checked += 1
                assert bracket in shown, f"grpcbench {name} --help lost {bracket} ({param.name})"
    assert checked >= 5


def test_every_row_and_paragraph_of_lifecycle_names_tests_that_exist() -> None:
    """docs/lifecycle.md is the invariant and the exit codes: each exit code's row names
    the tests that hold it (in the comment after the table), each paragraph names one,
    and every test it names exists."""
    text = (DOCS / "lifecycle.md").read_text()
    rows = re.findall(r"^\| ([\d /]+) \|", text, re.MULTILINE)
    mapping = text[text.index("<!-- tests of each row") :]
    mapping = mapping[: mapping.index("-->")]
    named = dict(re.findall(r"^([\d /]+): (.+)$", mapping, re.MULTILINE))
    assert rows and set(rows) == set(named), set(rows) ^ set(named)
    paragraphs = [
        p for p in re.split(r"\n\s*\n", text)
        if p.strip() and not p.lstrip().startswith(("#", "|", "<!--"))
    ]  # fmt: skip
    assert all(re.search(r"tests/test_\w+\.py", p) for p in paragraphs), "a paragraph names no test"
    for path, name in re.findall(r"(tests/test_\w+\.py)(?:::(\w+))?", text):
        source = (ROOT / path).read_text()
        assert not name or re.search(rf"^(async )?def {name}\(", source, re.MULTILINE), (path, name)


def test_every_row_of_the_locust_and_k6_table_names_a_test_that_exists() -> None:
    """docs/mixes.md's table beside Locust and k6: each row names the test that checks
    it at a recording server, and that test exists."""
    text = (DOCS / "mixes.md").read_text()
    section = text[text.index("### Beside Locust and k6") :]
    table = section[section.index("| |") :].split("\n\n", 1)[0].splitlines()
    rows = table[2:]  # after the header and its rule
    assert len(rows) >= 7
    for row in rows:
        found = re.search(r"`(tests/test_\w+\.py)::(\w+)`", row)
        assert found, f"a row names no test: {row}"
        source = (ROOT / found[1]).read_text()
        assert re.search(rf"^def {found[2]}\(", source, re.MULTILINE), found.group(0)


def test_every_test_a_page_names_exists() -> None:
    """A page that says "tests/test_x.py checks this" (or names the test) on any page,
    the README too, points at a file and a test that exist: a renamed or deleted test
    must take its sentence with it."""
    pages = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
    named = 0
    for page in pages:
        for path, name in re.findall(
            r"(tests/(?:\w+/)*test_\w+\.py)(?:::(\w+))?", page.read_text()
        ):
            assert (ROOT / path).exists(), f"{page.name} names {path}, which does not exist"
            source = (ROOT / path).read_text()
            assert not name or re.search(rf"^(async )?def {name}\(", source, re.MULTILINE), (
                f"{page.name} names {path}::{name}, which does not exist"
            )
            named += 1
    assert named >= 30, named
