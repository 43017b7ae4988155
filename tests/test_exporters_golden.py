"""One golden file per output format: every exporter's bytes for one saved run.

A changed column, a shifted field or a figure written under another name fails
here. When a format changes on purpose, regenerate and review the diff:
``GRPCBENCH_GOLDEN=write pytest tests/test_exporters_golden.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from grpcbench.base.references import load_reference
from grpcbench.model.results_file import load_run
from grpcbench.report.exporters import EXPORTERS

GOLDEN = Path(__file__).parent / "golden"
RECORD = Path(__file__).parent / "fixtures" / "results" / "repeat3_a.json"
BUILT_IN = [name for name, info in EXPORTERS.items() if info.render.startswith("grpcbench.")]


@pytest.mark.parametrize("name", BUILT_IN)
def test_each_format_renders_its_golden_bytes(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if name == "html":  # its charts are matplotlib's SVG, tested in test_html_report
        monkeypatch.setattr("grpcbench.report.html.render_charts", lambda record: [])
    rendered = load_reference(EXPORTERS[name].render)(load_run(RECORD))
    assert isinstance(rendered, bytes)
    golden = GOLDEN / f"repeat3_a.{name}"
    if os.environ.get("GRPCBENCH_GOLDEN") == "write":
        golden.write_bytes(rendered)
    assert rendered == golden.read_bytes(), f"{name} changed: see {golden}"


def test_every_golden_file_is_a_format() -> None:
    assert sorted(p.suffix[1:] for p in GOLDEN.glob("repeat3_a.*")) == sorted(BUILT_IN)


def test_the_csv_golden_catches_a_dropped_or_misplaced_column(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The defects the round's audit made and no CSV test saw: the ok column dropped
    (every later column shifts), and the max written as the average."""
    from grpcbench.report import csv_export

    golden = (GOLDEN / "repeat3_a.csv").read_bytes()
    original = csv_export.level_row
    for broken in (
        lambda level: [
            v for i, v in enumerate(original(level)) if i != csv_export.FIELDS.index("ok")
        ],
        lambda level: [
            original(level)[csv_export.FIELDS.index("slowest_ms")]
            if i == csv_export.FIELDS.index("average_ms")
            else v
            for i, v in enumerate(original(level))
        ],
    ):
        monkeypatch.setattr(csv_export, "level_row", broken)
        assert csv_export.render_csv(load_run(RECORD)) != golden
