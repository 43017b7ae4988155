"""A driver, a server kind and an exporter added by a plugin package alone.

``tests/support/plugin_site`` is a package installed as a plugin would be: a module
and its dist-info's entry points, nothing else. With it on PYTHONPATH each new
entry appears in ``run --help``, is validated by its declaration, runs, and
reaches the results; no grpcbench file names any of them.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import GRPCBENCH

SITE = Path(__file__).parent / "support" / "plugin_site"


def _grpcbench(*args: str, log: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SITE), os.getcwd()]),
           "COLUMNS": "2000", "NO_COLOR": "1"}  # fmt: skip
    if log is not None:
        env["GRPCBENCH_TEST_PLUGIN_LOG"] = str(log)
    return subprocess.run(
        [*GRPCBENCH, *args], capture_output=True, text=True, env=env, timeout=240, check=False
    )


def test_the_plugin_is_not_seen_without_its_package() -> None:
    from grpcbench.load.catalogue import DRIVERS
    from grpcbench.report.exporters import EXPORTERS
    from grpcbench.servers.kinds import KINDS

    assert "plugin-builtin" not in DRIVERS and "grpcio-gzip" not in KINDS
    assert "tsv" not in EXPORTERS


def test_each_plugin_entry_is_in_the_help() -> None:
    shown = _grpcbench("run", "--help")
    assert shown.returncode == 0, shown.stderr
    text = " ".join(shown.stdout.split())
    assert "plugin-builtin: the tests' plugin driver" in text
    assert "grpcio-gzip[:gzip=false,workers=4,processes=1]: the tests' plugin kind" in text
    assert "tsv (the tests' plugin format" in text
    listed = _grpcbench("servers")
    assert "grpcio-gzip[:gzip=false,workers=4,processes=1]" in listed.stdout


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["-s", "grpcio-gzip:gzip=maybe"], "gzip must be true or false"),
        (["-s", "grpcio-gzip:zip=1"], "unknown option 'zip' for 'grpcio-gzip'"),
        (["-s", "grpcio-gzip+uvloop"], "synchronous"),
        (["--load", "plugin-builtin", "--connections", "per-request"],
         "--load plugin-builtin cannot run --connections per-request or checkout:N"),
        (["--export", "tsv"], "bad --export 'tsv'"),
    ],
)  # fmt: skip
def test_each_plugin_entry_is_validated_by_its_declaration(args: list[str], said: str) -> None:
    refused = _grpcbench("run", "--no-pin", *args)
    assert refused.returncode == 2, refused.stderr
    assert said in refused.stderr
    assert "Traceback" not in refused.stderr


def test_a_service_without_the_reused_servicers_is_refused(tmp_path: Path) -> None:
    """grpcio-gzip serves grpcio's servicers: a service without them is refused by name."""
    refused = _grpcbench("run", "--no-pin", "-s", "grpcio-gzip", "--service",
                         "tests.support.services:AIO_ONLY")  # fmt: skip
    assert refused.returncode == 2, refused.stderr
    assert "no servicer for server kind grpcio-gzip (it serves grpcio's servicers)" in (
        " ".join(refused.stderr.split())
    )


@pytest.mark.integration  # it starts a server
def test_the_plugin_driver_kind_and_exporter_run_and_reach_the_results(tmp_path: Path) -> None:
    out, tsv, log = tmp_path / "r.json", tmp_path / "r.tsv", tmp_path / "served.log"
    ran = _grpcbench(
        "run", "--no-pin", "-s", "grpcio-gzip:gzip=true", "--load", "plugin-builtin",
        "-c", "2", "-n", "60", "--warmup", "0", "-o", str(out), "--export", f"tsv={tsv}",
        log=log,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    record = json.loads(out.read_text())
    assert record["options"]["targets"] == ["grpcio-gzip:gzip=true"]
    assert record["options"]["drivers"] == ["plugin-builtin"]
    (level,) = record["levels"]
    assert (level["server"], level["load"]["driver"]) == ("grpcio-gzip:gzip=true", "plugin-builtin")
    assert level["load"]["statuses"] == {"OK": 60}
    assert log.read_text() == "grpcio-gzip:gzip=true gzip=True\n"
    assert tsv.read_text().splitlines() == [
        "server\tdriver\tconcurrency\tcount\tok",
        "grpcio-gzip:gzip=true\tplugin-builtin\t2\t60\t60",
    ]
