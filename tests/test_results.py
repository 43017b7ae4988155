import json
from pathlib import Path

import pytest

from grpcbench.errors import UsageError
from grpcbench.load.builtin import cap_cpu_budget, split, split_spec
from grpcbench.load.model import LoadResult, LoadSpec
from grpcbench.results import FORMAT_VERSION, RunRecord, load_run, write_json_atomically
from tests.support.factories import level, load_result


def test_run_record_json_round_trip(tmp_path: Path) -> None:
    record = RunRecord(options={"concurrency": [2]}, metadata={"python": "3.11"})
    record.levels.append(level("grpclib", statuses={"OK": 3, "Unavailable": 1}))
    record.finish("complete")
    path = tmp_path / "r.json"
    write_json_atomically(path, record.to_json())
    data = json.loads(path.read_text())
    assert data["format_version"] == FORMAT_VERSION and data["status"] == "complete"
    loaded = load_run(path)
    assert loaded.levels == record.levels
    assert loaded.levels[0].load.latency.percentile_us(50) == 2000


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
    spec = LoadSpec(target="x:1", service="hello", concurrency=7, requests=1001, warmup_requests=10)
    parts = split_spec(spec, 3)
    assert [p.concurrency for p in parts] == [3, 2, 2]
    assert sum(p.requests for p in parts) == 1001
    assert sum(p.warmup_requests for p in parts) == 10
    assert split(5, 2) == [3, 2]
    assert len(split_spec(spec, 50)) == 7  # never more processes than users


def test_processes_sharing_pinned_cpus_share_their_budget() -> None:
    merged = load_result([1], {"OK": 1}, wall_s=1.0, client_cpu_s=0.5).merge(
        load_result([1], {"OK": 1}, wall_s=1.0, client_cpu_s=0.45)
    )
    assert merged.cpu_cores == 2 and not merged.client_saturated
    on_one_cpu = cap_cpu_budget(merged, (1,))
    assert on_one_cpu.cpu_cores == 1 and on_one_cpu.client_saturated
    assert cap_cpu_budget(merged, (0, 1, 2)).cpu_cores == 2
