import json
import re
from pathlib import Path
from typing import Any

import pytest

from grpcbench.base.errors import UsageError
from grpcbench.base.output_files import write_atomically
from grpcbench.load.builtin import cap_cpu_budget, split, split_spec
from grpcbench.model.load_result import GeneratorJob, LoadResult
from grpcbench.model.results import (
    FORMAT_VERSION,
    RecordedOptions,
    RunRecord,
)
from grpcbench.model.results_file import load_run
from grpcbench.report.json_export import results_bytes
from tests.support.factories import level, load_result, make_spec


def test_run_record_json_round_trip(tmp_path: Path) -> None:
    record = RunRecord(
        options=RecordedOptions(scenario="hello", targets=("grpclib",)), metadata={"python": "3.11"}
    )
    record.levels.append(level("grpclib", statuses={"OK": 3, "Unavailable": 1}))
    record.finish("complete")
    path = tmp_path / "r.json"
    write_atomically(path, results_bytes(record.to_json()))
    data = json.loads(path.read_text())
    assert data["format_version"] == FORMAT_VERSION and data["status"] == "complete"
    loaded = load_run(path)
    assert loaded.levels == record.levels
    assert loaded.options == record.options
    assert loaded.levels[0].measured.latency.percentile_us(50) == 2000


def test_unknown_format_version_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"format_version": 999}))
    with pytest.raises(UsageError, match="format version"):
        load_run(path)


def test_load_result_merge_adds_counts_and_merges_latency() -> None:
    a = load_result([1000] * 3, {"OK": 2, "Unavailable": 1}, wall_s=1.0, client_cpu_s=0.9)
    b = load_result([3000] * 2, {"OK": 2}, wall_s=2.0, client_cpu_s=0.1)
    merged = a.merge(b)
    assert merged.statuses == {"OK": 4, "Unavailable": 1}
    assert merged.count == 5 and merged.latency.count == 5
    assert merged.latency.max_us == 3000 and merged.latency.min_us == 1000
    assert merged.wall_s == 2.0 and merged.processes == 2
    assert merged.client_cpu_fraction == pytest.approx(1.0 / 4.0)


def test_saturation_flag() -> None:
    assert load_result([1], {"OK": 1}, wall_s=1.0, client_cpu_s=0.95).client_saturated
    assert not load_result([1], {"OK": 1}, wall_s=1.0, client_cpu_s=0.5).client_saturated


def test_load_result_json_round_trip() -> None:
    result = load_result([5, 6, 7], {"OK": 3})
    assert LoadResult.from_json(json.loads(json.dumps(result.to_json()))) == result


def test_split_spec_keeps_totals() -> None:
    spec = make_spec(
        target="x:1", service="hello", concurrency=7, requests=1001, warmup_requests=10
    )
    parts = split_spec(spec, 3)
    assert [p.share.concurrency for p in parts] == [3, 2, 2]
    assert sum(p.share.requests for p in parts) == 1001
    assert sum(p.share.warmup_requests for p in parts) == 10
    assert split(5, 2) == [3, 2]
    assert len(split_spec(spec, 50)) == 7  # never more processes than users
    assert GeneratorJob.from_json(json.loads(json.dumps(parts[1].to_json()))) == parts[1]


def test_processes_sharing_pinned_cpus_share_their_budget() -> None:
    merged = load_result([1], {"OK": 1}, wall_s=1.0, client_cpu_s=0.5).merge(
        load_result([1], {"OK": 1}, wall_s=1.0, client_cpu_s=0.45)
    )
    assert merged.cpu_cores == 2 and not merged.client_saturated
    on_one_cpu = cap_cpu_budget(merged, (1,))
    assert on_one_cpu.cpu_cores == 1 and on_one_cpu.client_saturated
    assert cap_cpu_budget(merged, (0, 1, 2)).cpu_cores == 2


FIXTURES = Path(__file__).parent / "fixtures" / "results"


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.json")))
def test_every_stored_format_1_file_loads_as_format_2(name: str, tmp_path: Path) -> None:
    raw = json.loads((FIXTURES / name).read_text())
    assert raw["format_version"] == 1
    record = load_run(FIXTURES / name)
    # Every level keeps its identity: plan from the flat fields, driver from load.
    assert [
        (lv.server, lv.driver, lv.concurrency, lv.channels, lv.rate, lv.variant, lv.repeat)
        for lv in record.levels
    ] == [
        (
            lv["server"], lv["driver"], lv["concurrency"], lv.get("channels", 0),
            lv.get("rate", 0.0), lv.get("variant", ""), lv.get("repeat", 0),
        )
        for lv in raw["levels"]
    ]  # fmt: skip
    assert [lv.measured.statuses for lv in record.levels] == [
        lv["load"]["statuses"] for lv in raw["levels"]
    ]
    options = raw["options"]
    assert record.options.scenario == options["scenario"]["name"]
    assert record.options.settings.requests == options["requests"]
    assert record.options.settings.timeout_s == options["timeout_s"]
    assert list(record.options.placement.server_cpus) == options["placement"]["server_cpus"]
    # Written again, it is a format-2 file that loads to the same record.
    path = tmp_path / "again.json"
    write_atomically(path, results_bytes(record.to_json()))
    assert json.loads(path.read_text())["format_version"] == FORMAT_VERSION == 2
    again = load_run(path)
    assert again.levels == record.levels and again.options == record.options


def test_format_1_level_errors_become_typed_errors(tmp_path: Path) -> None:
    raw = json.loads((FIXTURES / "with_errors.json").read_text())
    raw["level_errors"] = ["grpclib [ghz] concurrency 4: ghz exited with code 1"]
    raw["status"] = "failed"
    path = tmp_path / "v1.json"
    path.write_text(json.dumps(raw))
    record = load_run(path)
    assert record.status == "failed"
    assert [e.describe() for e in record.level_errors] == raw["level_errors"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[1, 2]", "expected a JSON object"),
        ('{"format_version": 2, "status": "done"}', "cannot read results file"),
        ("\x89PNG\x00\x01", "cannot read results file"),
        ('{"format_version": "2"}', "format version"),
    ],
)
def test_malformed_results_files_are_one_clear_error(
    tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(UsageError, match=message):
        load_run(path)


def test_corrupt_histogram_is_a_clear_error(tmp_path: Path) -> None:
    raw = json.loads((FIXTURES / "with_errors.json").read_text())
    raw["levels"][0]["load"]["latency"]["encoded"] = "not base64!"
    path = tmp_path / "corrupt.json"
    path.write_text(json.dumps(raw))
    with pytest.raises(UsageError, match="cannot read results file"):
        load_run(path).levels[0].measured.latency.percentile_us(50)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda level: level["load"].update(statuses={"OK": -5}), "status 'OK' has count -5"),
        (lambda level: level["load"].update(statuses={"OK": "many"}), "has count 'many'"),
        (lambda level: level.update(server=None), "server is None, not a name"),
        (lambda level: level.update(server=""), "server is '', not a name"),
        (lambda level: level["load"].update(wall_s=-1.0), "wall_s is -1.0"),
    ],
)
def test_a_mistyped_level_is_refused_not_rendered(
    tmp_path: Path, change: Any, message: str
) -> None:
    """Negative counts would render negative req/s, a null server a column "None"."""
    raw = json.loads((FIXTURES / "with_errors.json").read_text())
    change(raw["levels"][0])
    path = tmp_path / "mistyped.json"
    path.write_text(json.dumps(raw))
    with pytest.raises(UsageError, match=re.escape(message)):
        load_run(path)
