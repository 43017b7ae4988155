"""Figures in the docs come from saved results through scripts/render_results.py:
a block edited by hand, or results saved without re-rendering, fail here."""

from __future__ import annotations

import subprocess
import sys
from types import ModuleType

from tests.conftest import REPO

DOCUMENTS = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def _renderer() -> ModuleType:
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import render_results
    finally:
        sys.path.pop(0)
    return render_results


def test_results_blocks_match_their_saved_results() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts/render_results.py"), "--check"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr + done.stdout


def test_a_hand_edited_figure_is_put_back() -> None:
    renderer = _renderer()
    text = (REPO / "README.md").read_text()
    match = renderer.BLOCK.search(text)
    assert match, "README.md has no results block"
    block = match.group(0)
    digit = next(i for i, c in enumerate(block) if c.isdigit() and i > 30)
    tampered = block[:digit] + str((int(block[digit]) + 1) % 10) + block[digit + 1 :]
    assert renderer.rendered(text.replace(block, tampered)) == text


def test_own_service_s_sentences_under_its_ghz_tables_hold_for_their_files() -> None:
    """docs/own-service.md: the built-in column is server-bound, ghz's is *neither*, and
    ghz spends more generator CPU per call, in both saved runs the page shows."""
    from grpcbench.model.results_file import load_run

    for name in ("echo-ghz-unary", "echo-ghz-expand"):
        levels = {lv.driver: lv for lv in load_run(REPO / f"docs/results/{name}.json").levels}
        builtin, ghz = levels["builtin"], levels["ghz"]
        assert (builtin.verdict, ghz.verdict) == ("server-bound", "neither"), name
        assert (ghz.generator_cpu_us_per_call or 0) > (builtin.generator_cpu_us_per_call or 0)
