"""Exporter registry: each output format is a renderer, ``render(record) -> bytes``.

Exporters render; ``Exports`` alone writes, through ``base.output_files`` (a
temporary file renamed over the path, or standard output), as hyperfine's
exporters do. So every format is written atomically, and a golden test per
format (tests/golden/) holds its bytes. Formats marked ``after_each_level`` are
rewritten after every level (an interrupted or failed run keeps what it
measured); the others once, when the run ends. Every destination is checked
before anything starts. Adding a format is one renderer plus one entry: below,
or a plugin's ``grpcbench.exporters`` entry point (``base.plugins``); it is then
given as ``--export NAME=PATH`` and listed in that option's help.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from grpcbench.base.errors import UsageError
from grpcbench.base.output_files import check_apart, write_atomically, write_to_stdout
from grpcbench.base.plugins import Registry
from grpcbench.base.references import load_reference

if TYPE_CHECKING:  # the exporters' names are read with the options; records come later
    from grpcbench.model.results import RunRecord


@dataclass(frozen=True)
class ExporterInfo:
    name: str
    description: str
    render: str  # "module:function" taking a RunRecord, returning bytes; imported when used
    after_each_level: bool
    # Its own `grpcbench run` option, if it has one (every format is --export NAME=PATH).
    own_option: str = ""
    # "module:function" that raises UsageError when a needed extra is missing.
    requires: str = ""
    lists_calls: bool = False  # needs per-call records (LoadSettings.call_details)

    @property
    def option(self) -> str:
        """How the user named it, for messages."""
        return self.own_option or f"--export {self.name}"


def _ghz(name: str, module: str, lists_calls: bool) -> ExporterInfo:
    return ExporterInfo(
        f"ghz-{name}",
        f"ghz's -O {name}",
        f"grpcbench.report.{module}:render_ghz_{name.replace('-', '_')}",
        True,
        f"-O {name}",
        lists_calls=lists_calls,
    )


EXPORTERS: Registry[ExporterInfo] = Registry(
    "grpcbench.exporters",
    ExporterInfo,
    (
        ExporterInfo(
            "json", "the results file (grpcbench show, compare, report read it)",
            "grpcbench.report.json_export:render_json", True, "--output",
        ),
        ExporterInfo(
            "markdown", "the seed's tables, one per level",
            "grpcbench.report.markdown:render_markdown", True, "--markdown",
        ),
        ExporterInfo(
            "csv", "one row per level, server, driver and repeat",
            "grpcbench.report.csv_export:render_csv", True, "--csv",
        ),
        _ghz("json", "ghz_formats", True),
        _ghz("pretty", "ghz_formats", True),
        _ghz("csv", "ghz_formats", True),
        _ghz("summary", "ghz_formats", False),
        _ghz("influx-summary", "ghz_ingest", False),
        _ghz("influx-details", "ghz_ingest", True),
        _ghz("prometheus", "ghz_ingest", False),
        ExporterInfo(
            "html", "a self-contained page of tables and charts",
            "grpcbench.report.html:render_html", False, "--report",
            requires="grpcbench.report.chart_kit:require_matplotlib",
        ),
    ),
)  # fmt: skip


def exports_help() -> str:
    """--export's help, from the registry (plugins' formats included)."""
    listed = "; ".join(f"{info.name} ({info.description})" for info in EXPORTERS.values())
    return f"Write FORMAT=PATH (repeatable; PATH - is standard output). Formats: {listed}."


# An output path that means standard output (ghz's -O without -o, or -o -).
STDOUT = Path("-")


@dataclass(frozen=True)
class Output:
    format: str  # a key of EXPORTERS
    path: Path  # or STDOUT

    @property
    def info(self) -> ExporterInfo:
        return EXPORTERS[self.format]

    @property
    def to_stdout(self) -> bool:
        return self.path == STDOUT


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


def _through_link(output: Output) -> Output:
    """A symlinked output path as the file it points to (the link stays)."""
    if output.to_stdout:
        return output
    try:
        linked = output.path.is_symlink()
    except OSError as error:  # a name too long, a loop of links
        raise UsageError(f"{output.info.option} {output.path}: {error.strerror or error}") from None
    return replace(output, path=Path(os.path.realpath(output.path))) if linked else output


def check_writable(option: str, path: Path) -> None:
    """Fail now, not after a whole level, if ``path`` cannot be written. Results are
    written to a temporary file renamed over ``path`` (``base.output_files``), so an
    existing ``path`` must be a regular file: a device (/dev/null, /dev/full) or a pipe
    would be replaced; and a read-only one is refused, not replaced."""
    try:
        directory, exists, regular = path.is_dir(), path.exists(), path.is_file()
    except (OSError, ValueError) as error:  # a name too long; a NUL in it
        raise UsageError(
            f"{option} {path!s:.80}: {getattr(error, 'strerror', None) or error}"
        ) from None
    if directory:
        raise UsageError(f"{option} {path}: is a directory")
    if exists and not regular:
        raise UsageError(
            f"{option} {path}: not a regular file (a device, pipe or socket); results go to a file"
        )
    if exists and (not os.access(path, os.W_OK) or not path.stat().st_mode & stat.S_IWUSR):
        raise UsageError(f"{option} {path}: read-only (it is not replaced)")
    parent = path.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=parent, prefix=f".{path.name}.", suffix=".probe"):
            pass
    except OSError as error:
        raise UsageError(
            f"{option} {path}: cannot write there ({error.strerror or error})"
        ) from None


def check_outputs_apart(
    outputs: tuple[Output, ...], read: list[tuple[str, Path]], debug: Path | None = None
) -> None:
    """No output is written over a file the run reads (``read``: option, path), or over
    another output (``--debug``'s log included)."""
    written = [(output.info.option, output.path) for output in outputs if not output.to_stdout]
    if debug is not None:
        written.append(("--debug", debug))
    check_apart(written, read)


class Exports:
    """The outputs of one run: checked up front, written after levels and at the end.

    An output to standard output is written once, at the end (the tables then go
    to standard error: ``run_benchmark``). An output path
    that is a symlink is written through: its target gets the file,
    the link stays. An output that cannot be written mid-run (the disk filled, it
    turned read-only) does not stop the run: it is said once, the others are
    written, and ``at_end`` reports it."""

    def __init__(self, outputs: tuple[Output, ...]) -> None:
        self.outputs = tuple(_through_link(output) for output in outputs)
        self.failed: dict[Path, str] = {}  # output path -> why it could not be written
        self.on_failure: Callable[[str], None] = lambda message: None

    def check(self) -> None:
        """Extras present and every destination writable, before anything starts."""
        seen: dict[Path, str] = {}
        for output in self.outputs:
            if output.info.requires:
                load_reference(output.info.requires)()
            if output.to_stdout:
                if STDOUT in seen:
                    raise UsageError(
                        f"{output.info.option} and {seen[STDOUT]} both write to standard output"
                    )
                seen[STDOUT] = output.info.option
                continue
            resolved = output.path.resolve()
            if resolved in seen:
                raise UsageError(
                    f"{output.info.option} and {seen[resolved]} name the same file {output.path}"
                )
            seen[resolved] = output.info.option
            check_writable(output.info.option, output.path)

    def after_level(self, record: RunRecord) -> None:
        for output in self.outputs:
            if output.info.after_each_level and not output.to_stdout:
                self._write(output, record)

    @property
    def to_stdout(self) -> bool:
        """Whether an output takes standard output (so the tables must not)."""
        return any(output.to_stdout for output in self.outputs)

    def at_end(self, record: RunRecord) -> list[Path]:
        """Every output, final; returns the files written (``failed`` holds the rest)."""
        return [
            output.path
            for output in self.outputs
            if self._write(output, record) and not output.to_stdout
        ]

    def _write(self, output: Output, record: RunRecord) -> bool:
        render: Callable[[RunRecord], bytes] = load_reference(output.info.render)
        try:
            data = render(record)
            if not data:  # a format of levels (ghz's), and none was measured: no empty file
                self.on_failure(f"{output.info.option} {output.path}: not written, no level"
                                " was measured")  # fmt: skip
                return False
            if output.to_stdout:
                write_to_stdout(data)
            else:
                write_atomically(output.path, data)
        except OSError as error:
            reason = f"cannot write {output.info.option} {output.path}: {error.strerror or error}"
            if output.path not in self.failed:
                self.on_failure(reason + " (the run goes on)")
            self.failed[output.path] = reason
            return False
        self.failed.pop(output.path, None)
        return True
