"""Exporter registry: each output format is one module with a ``write(record, path)``.

Formats marked ``after_each_level`` are rewritten after every level (so an
interrupted or failed run keeps what it measured, as hyperfine does); the
others are written once, when the run ends. Every destination is checked
before anything starts. Adding a format is one module plus one entry below
(and, for ``grpcbench run``, one option naming its path).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from grpcbench.base.errors import UsageError
from grpcbench.base.references import load_reference
from grpcbench.model.results import RunRecord


@dataclass(frozen=True)
class ExporterInfo:
    name: str
    option: str  # the `grpcbench run` option that names its file
    writer: str  # "module:function" taking (RunRecord, Path), imported only when used
    after_each_level: bool
    # "module:function" that raises UsageError when a needed extra is missing.
    requires: str = ""


EXPORTERS: dict[str, ExporterInfo] = {
    info.name: info
    for info in (
        ExporterInfo("json", "--output", "grpcbench.report.json_export:write_json", True),
        ExporterInfo("markdown", "--markdown", "grpcbench.report.markdown:write_markdown", True),
        ExporterInfo("csv", "--csv", "grpcbench.report.csv_export:write_csv", True),
        ExporterInfo("ghz-json", "-O json", "grpcbench.report.ghz_json:write_ghz_json", True),
        ExporterInfo(
            "html",
            "--report",
            "grpcbench.report.html:write_html",
            False,
            requires="grpcbench.report.chart_kit:require_matplotlib",
        ),
    )
}


@dataclass(frozen=True)
class Output:
    format: str  # a key of EXPORTERS
    path: Path

    @property
    def info(self) -> ExporterInfo:
        return EXPORTERS[self.format]


def outputs_from(exports: tuple[str, ...] = (), **paths: Path | None) -> tuple[Output, ...]:
    """The outputs asked for: ``FORMAT=PATH`` items (``--export``) and named paths
    (``outputs_from(json=Path("r.json"), csv=None)``, from --output, --csv, ...)."""
    outputs = [Output(name, path) for name, path in paths.items() if path is not None]
    for item in exports:
        name, sep, path = item.partition("=")
        if not sep or not path.strip() or name.strip() not in EXPORTERS:
            raise UsageError(
                f"bad --export {item!r}: expected FORMAT=PATH with FORMAT one of"
                f" {', '.join(EXPORTERS)}"
            )
        outputs.append(Output(name.strip(), Path(path.strip())))
    return tuple(outputs)


def check_writable(option: str, path: Path) -> None:
    """Fail now, not after a whole level, if ``path`` cannot be written. Results are
    written to a temporary file renamed over ``path``, so an existing ``path`` must be
    a regular file: a device (/dev/null, /dev/full) or a pipe would be replaced."""
    if path.is_dir():
        raise UsageError(f"{option} {path}: is a directory")
    if path.exists() and not path.is_file():
        raise UsageError(
            f"{option} {path}: not a regular file (a device, pipe or socket); results go to a file"
        )
    parent = path.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=parent, prefix=f".{path.name}.", suffix=".probe"):
            pass
    except OSError as error:
        raise UsageError(
            f"{option} {path}: cannot write there ({error.strerror or error})"
        ) from None


class Exports:
    """The outputs of one run: checked up front, written after levels and at the end.

    An output path that is a symlink is written through: its target gets the file,
    the link stays. An output that cannot be written mid-run (the disk filled, it
    turned read-only) does not stop the run: it is said once, the others are
    written, and ``at_end`` reports it."""

    def __init__(self, outputs: tuple[Output, ...]) -> None:
        self.outputs = tuple(
            replace(output, path=Path(os.path.realpath(output.path)))
            if output.path.is_symlink() else output
            for output in outputs
        )  # fmt: skip
        self.failed: dict[Path, str] = {}  # output path -> why it could not be written
        self.on_failure: Callable[[str], None] = lambda message: None

    def check(self) -> None:
        """Extras present and every destination writable, before anything starts."""
        seen: dict[Path, str] = {}
        for output in self.outputs:
            resolved = output.path.resolve()
            if resolved in seen:
                raise UsageError(
                    f"{output.info.option} and {seen[resolved]} name the same file {output.path}"
                )
            seen[resolved] = output.info.option
            if output.info.requires:
                load_reference(output.info.requires)()
            check_writable(output.info.option, output.path)

    def after_level(self, record: RunRecord) -> None:
        for output in self.outputs:
            if output.info.after_each_level:
                self._write(output, record)

    def at_end(self, record: RunRecord) -> list[Path]:
        """Every output, final; returns what was written (``failed`` holds the rest)."""
        return [output.path for output in self.outputs if self._write(output, record)]

    def _write(self, output: Output, record: RunRecord) -> bool:
        try:
            load_reference(output.info.writer)(record, output.path)
        except OSError as error:
            reason = f"cannot write {output.info.option} {output.path}: {error.strerror or error}"
            if output.path not in self.failed:
                self.on_failure(reason + " (the run goes on)")
            self.failed[output.path] = reason
            return False
        self.failed.pop(output.path, None)
        return True
