"""No output is written over a file the run reads, or over another output.

Every option declared ``reads=True`` is paired with every output option (the
exporters', --export's and --debug), through the file's own name, a relative name
and a symlink: each pair is refused in one line before anything runs, and the
input is left as it was.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from grpcbench.base.declarations import build_declared, declared_options
from grpcbench.base.errors import UsageError
from grpcbench.run.arguments import RunArgs
from grpcbench.run.options import build_run_options
from tests.conftest import GRPCBENCH

READERS = sorted(option.names[0] for option in declared_options(RunArgs) if option.info.reads)


def test_the_declared_readers_are_the_files_a_run_reads() -> None:
    assert sorted(
        ["--proto", "--protoset", "--data-file", "--metadata-file", "--binary-file",
         "--cacert", "--cert", "--key", "--config"]
    ) == READERS  # fmt: skip


WRITER_KEYWORDS = {
    "-o": "output", "--markdown": "markdown", "--csv": "csv", "--report": "report",
    "--export": "exports", "--debug": "debug",
}  # fmt: skip


def _keyword(reader: str) -> str:
    return next(o.name for o in declared_options(RunArgs) if o.names[0] == reader)


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("writer", sorted(WRITER_KEYWORDS))
@pytest.mark.parametrize("spelling", ["same", "relative", "symlink"])
def test_an_output_over_an_input_is_refused(
    reader: str, writer: str, spelling: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    source = tmp_path / "input.json"
    source.write_text("{}\n")
    named = {"same": str(source), "relative": "./input.json", "symlink": "link.json"}[spelling]
    if spelling == "symlink":
        (tmp_path / "link.json").symlink_to(source)
    given: dict[str, object] = {_keyword(reader): str(source)}
    keyword = WRITER_KEYWORDS[writer]
    given[keyword] = (
        (f"ghz-json={named}",) if keyword == "exports" else named if keyword == "debug"
        else Path(named)
    )  # fmt: skip
    with pytest.raises(UsageError, match=f"is also {reader}'s input: it would be overwritten"):
        build_run_options(build_declared(RunArgs, given))
    assert source.read_text() == "{}\n"


def test_the_command_line_says_it_in_one_line(tmp_path: Path) -> None:
    data = tmp_path / "data.json"
    data.write_text('{"name": "x"}\n')
    ran = subprocess.run(
        [*GRPCBENCH, "run", "--no-pin", "--dry-run", "-D", str(data), "-o", str(data)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert ran.returncode == 2 and "Traceback" not in ran.stderr, ran.stderr
    assert f"--output {data} is also --data-file's input" in " ".join(ran.stderr.split())
    assert data.read_text() == '{"name": "x"}\n'


def test_a_scenario_file_and_two_outputs_of_one_file_are_refused(tmp_path: Path) -> None:
    scenario = tmp_path / "mine.toml"
    scenario.write_text('name = "mine"\nservice = "hello"\n')
    ran = subprocess.run(
        [*GRPCBENCH, "run", "--no-pin", "--dry-run", "--scenario", str(scenario), "-o",
         str(scenario)], capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert ran.returncode == 2 and "is also --scenario's input" in ran.stderr, ran.stderr
    both = subprocess.run(
        [*GRPCBENCH, "run", "--no-pin", "--dry-run", "-o", str(tmp_path / "r.json"), "--debug",
         str(tmp_path / "r.json")], capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert both.returncode == 2, both.stderr
    assert "--debug and --output name the same file" in " ".join(both.stderr.split())


def test_report_does_not_write_its_page_over_its_results(tmp_path: Path) -> None:
    results = Path(__file__).parent / "fixtures" / "results" / "repeat3_a.json"
    copy = tmp_path / "in.json"
    copy.write_bytes(results.read_bytes())
    ran = subprocess.run(
        [*GRPCBENCH, "report", str(copy), "--html", str(copy)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert ran.returncode == 2 and "it would be overwritten" in ran.stderr, ran.stderr
    assert copy.read_bytes() == results.read_bytes()


def test_a_read_only_output_is_refused_not_replaced(tmp_path: Path) -> None:
    kept = tmp_path / "r.json"
    kept.write_text("old\n")
    os.chmod(kept, 0o444)
    ran = subprocess.run(
        [*GRPCBENCH, "run", "--no-pin", "--dry-run", "-o", str(kept)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert ran.returncode == 2 and "read-only (it is not replaced)" in ran.stderr, ran.stderr
    assert kept.read_text() == "old\n" and (kept.stat().st_mode & 0o777) == 0o444


def test_names_no_file_can_have_are_never_the_same_file() -> None:
    from grpcbench.base.output_files import check_apart, is_file

    long, nul = Path("a" * 5000), Path("a\0b")
    check_apart([("-o", long), ("--csv", nul)], [("-D", long.with_suffix(".x")), ("-M", nul)])
    assert not is_file(long) and not is_file(nul)
