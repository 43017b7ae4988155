"""Committed stubs must be exactly what the pinned generator makes from protos/."""

import importlib.util
from pathlib import Path

from tests.conftest import REPO


def _generator():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(
        "generate_protos", REPO / "scripts/generate_protos.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_stubs_are_fresh(tmp_path: Path) -> None:
    generated = _generator().generate(tmp_path)
    assert generated
    stale = [
        str(path)
        for path in generated
        if (tmp_path / path).read_bytes() != (REPO / path).read_bytes()
    ]
    assert not stale, f"stubs are stale, run `nox -s proto`: {stale}"
