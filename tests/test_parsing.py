import pytest

from grpcbench.base.errors import UsageError
from grpcbench.base.parsing import (
    parse_cpu_set,
    parse_duration,
    parse_host_port,
    parse_positive_int_list,
    parse_warmup,
)


def test_int_list() -> None:
    assert parse_positive_int_list("2,10, 25,50", "concurrency") == (2, 10, 25, 50)


@pytest.mark.parametrize("text", ["", "2,,3", "2,x", "0", "-1", "2.5", "1,0"])
def test_int_list_rejects(text: str) -> None:
    with pytest.raises(UsageError, match="concurrency"):
        parse_positive_int_list(text, "concurrency")


@pytest.mark.parametrize(
    ("text", "seconds"), [("10s", 10.0), ("500ms", 0.5), ("2m", 120.0), ("1.5", 1.5)]
)
def test_duration(text: str, seconds: float) -> None:
    assert parse_duration(text, "d") == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "abc", "0s", "-1s", "10 hours"])
def test_duration_rejects(text: str) -> None:
    with pytest.raises(UsageError):
        parse_duration(text, "d")


def test_warmup_count_or_time() -> None:
    assert parse_warmup("500") == (500, 0.0)
    assert parse_warmup("2s") == (0, 2.0)
    assert parse_warmup("0") == (0, 0.0)


def test_cpu_set(monkeypatch: pytest.MonkeyPatch) -> None:
    from grpcbench.base import parsing

    monkeypatch.setattr(parsing, "_allowed_cpus", lambda: {0, 1, 3, 4})
    assert parse_cpu_set("0", "c") == (0,)
    assert parse_cpu_set("3,0-1", "c") == (0, 1, 3)
    for bad in ("", "a", "2-1", "1-2-3"):
        with pytest.raises(UsageError):
            parse_cpu_set(bad, "c")
    # CPUs this process may not run on, named; a huge range is refused, never built.
    for text, cpu in (("2", 2), ("0-3", 2), ("9", 9), ("0-999999999999", 5), ("7-9", 7)):
        with pytest.raises(UsageError, match=f"^bad c: CPU {cpu} is not available"):
            parse_cpu_set(text, "c")


def test_host_port() -> None:
    assert parse_host_port("127.0.0.1:50051") == ("127.0.0.1", 50051)
    for bad in ("127.0.0.1", ":1", "h:0", "h:99999", "h:x"):
        with pytest.raises(UsageError):
            parse_host_port(bad)


def test_params_are_toml_values_or_strings() -> None:
    from grpcbench.base.parsing import parse_params

    assert parse_params(["users=1000000", "keyword=e", "on=true", 'f=["a", "b"]'], "p") == {
        "users": 1000000,
        "keyword": "e",
        "on": True,
        "f": ["a", "b"],
    }
    with pytest.raises(UsageError, match="KEY=VALUE"):
        parse_params(["users"], "--server-param")


def test_go_time_formats_round_trip() -> None:
    """ghz's RFC3339Nano, written (ghz reports) and read (ghz's per-call records)."""
    from grpcbench.base.go_time import parse_rfc3339_nano, rfc3339, rfc3339_nano

    for stamp in (1_795_616_487_210_090_253, 1_795_616_487_000_000_000, 1_795_616_487_100_000_000):
        assert parse_rfc3339_nano(rfc3339_nano(stamp)) == stamp
    assert rfc3339_nano(1_795_616_487_210_090_253) == "2026-11-25T14:21:27.210090253Z"
    assert parse_rfc3339_nano("2026-11-25T16:21:27.210090253+02:00") == 1_795_616_487_210_090_253
    assert rfc3339("2026-11-25T14:21:27.123+00:00") == "2026-11-25T14:21:27Z"
