"""Feeders: -D FILE.jsonl/.csv gives each call a line, counted at a server of the tests' own."""

from __future__ import annotations

import json
import time
import tracemalloc
from collections import Counter
from pathlib import Path

import pytest

from grpcbench.rpc.feeder import Feeder, FeedExhausted
from tests.conftest import REPO, run_grpcbench
from tests.support.logging_echo import logging_echo

PROTO = str(REPO / "examples" / "echo" / "echo.proto")


def _lines(path: Path, *messages: str) -> Path:
    path.write_text("".join(json.dumps({"message": m}) + "\n" for m in messages))
    return path


def _taken(feeder: Feeder, calls: int) -> list[str]:
    return [json.loads(feeder.next_text())["message"] for _ in range(calls)]


def test_sequential_wraps_skips_blank_lines_and_strides_over_processes(tmp_path: Path) -> None:
    path = _lines(tmp_path / "r.jsonl", "a", "b", "c", "d", "e")
    path.write_text(path.read_text().replace('"c"}\n', '"c"}\n\n  \n'))
    assert _taken(Feeder(str(path), "sequential"), 7) == ["a", "b", "c", "d", "e", "a", "b"]
    first, second = Feeder(str(path), "sequential", 0, 2), Feeder(str(path), "sequential", 1, 2)
    assert _taken(first, 3) == ["a", "c", "e"] and _taken(second, 2) == ["b", "d"]


def test_once_gives_each_line_of_its_share_once_then_is_exhausted(tmp_path: Path) -> None:
    path = _lines(tmp_path / "r.jsonl", "a", "b", "c")
    shares = [Feeder(str(path), "once", index, 2) for index in (0, 1)]
    assert [share.count_share() for share in shares] == [2, 1]
    assert _taken(shares[0], 2) == ["a", "c"] and _taken(shares[1], 1) == ["b"]
    for share in shares:
        with pytest.raises(FeedExhausted):
            share.next_text()


def test_random_draws_only_the_file_s_lines(tmp_path: Path) -> None:
    path = _lines(tmp_path / "r.jsonl", "a", "b", "c")
    drawn = Counter(_taken(Feeder(str(path), "random", seed=1), 300))
    assert set(drawn) == {"a", "b", "c"} and min(drawn.values()) > 50


def test_a_csv_row_is_a_request_with_nested_and_bool_fields(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text('name,location.latitude,flag\n"Smith, J",409146138,true\n')
    feeder = Feeder(str(path), "sequential", bool_fields=frozenset({"flag"}))
    assert json.loads(feeder.next_text()) == {
        "name": "Smith, J", "location": {"latitude": "409146138"}, "flag": True,
    }  # fmt: skip


@pytest.mark.parametrize("mode", ["sequential", "once", "random"])
def test_a_line_that_is_not_utf8_is_named_never_replaced(tmp_path: Path, mode: str) -> None:
    """Bytes that are not UTF-8 were replaced with U+FFFD and sent: a request the user
    never wrote. Now the line is named, with the byte, on every mode."""
    from grpcbench.base.errors import UsageError

    path = tmp_path / "r.jsonl"
    path.write_bytes(b'{"message": "a"}\n\n{"message": "b\xff"}\n')
    feeder = Feeder(str(path), mode, seed=3)
    with pytest.raises(UsageError, match=r"r\.jsonl line 3: not UTF-8 \(byte 0xff at column 15\)"):
        _taken(feeder, 20)


def test_a_csv_file_s_bad_header_and_rows_are_named_by_line(tmp_path: Path) -> None:
    from grpcbench.base.errors import UsageError

    header = tmp_path / "h.csv"
    header.write_bytes(b"na\xe9me\nx\n")  # Latin-1, as Excel may save it
    with pytest.raises(UsageError, match=r"h\.csv line 1: not UTF-8"):
        Feeder(str(header), "sequential")
    rows = tmp_path / "r.csv"
    rows.write_text("message\na\nb\nc,d\n")
    with pytest.raises(UsageError, match=r"r\.csv line 4: 2 values for 1 columns"):
        _taken(Feeder(str(rows), "sequential"), 3)


def test_csv_as_spreadsheets_save_it(tmp_path: Path) -> None:
    """Excel's "CSV UTF-8" opens with a byte-order mark and ends lines with CRLF; a
    quoted field may hold commas, quotes and newlines (it was "has no field
    \\ufefflatitude", and a row cut at the newline)."""
    path = tmp_path / "r.csv"
    path.write_bytes(b'\xef\xbb\xbfmessage,n\r\n"two\r\nlines, and ""quotes""",1\r\nplain,2\r\n')
    feeder = Feeder(str(path), "once")
    assert feeder.header == ["message", "n"]
    assert [json.loads(feeder.next_text()) for _ in range(2)] == [
        {"message": 'two\r\nlines, and "quotes"', "n": "1"},
        {"message": "plain", "n": "2"},
    ]
    with pytest.raises(FeedExhausted):
        feeder.next_text()
    jsonl = tmp_path / "r.jsonl"
    jsonl.write_bytes(b'\xef\xbb\xbf{"message": "a"}\n')
    assert _taken(Feeder(str(jsonl), "sequential"), 2) == ["a", "a"]


def test_a_large_file_is_mapped_not_read_into_the_heap(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    line = json.dumps({"message": "x" * 200}) + "\n"
    path.write_text(line * 100_000)  # 21 MB
    tracemalloc.start()
    feeder = Feeder(str(path), "once")
    for _ in range(100_000):
        feeder.next_text()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 1 << 20, peak


def _run(address: str, tmp_path: Path, *args: str) -> dict:
    """grpcbench's own line (--target): its pre-flight call takes a line, which these
    tests count (a ghz line, the host last, makes none)."""
    out = tmp_path / "r.json"
    done = run_grpcbench(
        "run", "--target", address, "--insecure", "--call", "echo.Echo/Say", "--proto", PROTO,
        "--warmup", "0", "--output", str(out), *args, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text())


def _seen(log_requests: Counter[bytes]) -> Counter[str]:
    return Counter(request[2:].decode() for request in log_requests.elements())


@pytest.mark.integration
@pytest.mark.parametrize("stack", ["wire", "grpcio"])
def test_each_call_takes_the_next_line_and_templates_apply_per_line(
    tmp_path: Path, stack: str
) -> None:
    _lines(tmp_path / "r.jsonl", "a", "b", "n{{.RequestNumber}}")
    with logging_echo() as (address, log):
        _run(address, tmp_path, "-D", "r.jsonl", "-c", "3", "-n", "30", "--client-stack", stack)
        seen = _seen(log.requests("Say"))
    # the pre-flight call sends the first line once more
    assert seen["a"] == 10 + 1 and seen["b"] == 10
    assert {key for key in seen if key.startswith("n")} == {f"n{n}" for n in range(2, 30, 3)}


@pytest.mark.integration
@pytest.mark.parametrize("processes", ["1", "2"])
def test_once_sends_every_line_once_and_ends_the_level(tmp_path: Path, processes: str) -> None:
    _lines(tmp_path / "r.jsonl", *(f"m{n}" for n in range(25)))
    with logging_echo() as (address, log):
        result = _run(
            address, tmp_path, "-D", "r.jsonl", "--feed", "once", "-c", "2", "-n", "1000",
            "--client-processes", processes,
        )  # fmt: skip
        seen = _seen(log.requests("Say"))
    assert seen == Counter({f"m{n}": 1 for n in range(25)}) + Counter({"m0": 1})
    (level,) = result["levels"]
    assert level["load"]["statuses"] == {"OK": 25}


@pytest.mark.integration
def test_a_csv_feeder_and_random_order(tmp_path: Path) -> None:
    (tmp_path / "r.csv").write_text("message\nx\ny\nz\n")
    with logging_echo() as (address, log):
        _run(address, tmp_path, "-D", "r.csv", "--feed", "random", "-c", "2", "-n", "300")
        seen = _seen(log.requests("Say"))
    assert set(seen) == {"x", "y", "z"} and sum(seen.values()) == 301


@pytest.mark.integration
@pytest.mark.parametrize("loop", [["-c", "2"], ["--rate", "1000"]])
@pytest.mark.parametrize("stack", ["wire", "grpcio"])
def test_a_bad_line_past_the_checked_ones_ends_the_level_naming_it(
    tmp_path: Path, stack: str, loop: list[str]
) -> None:
    """Line 1,003 is not JSON (the first 1,000 are checked before any load): the level
    fails at once naming the file and line, on both stacks and both loops. The wire
    stack hung until --max-level and exited 0; grpcio's open loop dropped the call."""
    lines = [json.dumps({"message": f"m{n}"}) for n in range(1005)]
    lines[1002] = "not json"
    (tmp_path / "late.jsonl").write_text("\n".join(lines) + "\n")
    with logging_echo() as (address, _):
        started = time.monotonic()
        done = run_grpcbench(
            "run", address, "--insecure", "--call", "echo.Echo/Say", "--proto", PROTO,
            "--warmup", "0", "-n", "3000", "--max-level", "60s", "--client-stack", stack,
            "-D", "late.jsonl", *loop, cwd=tmp_path,
        )  # fmt: skip
    assert done.returncode == 4, done.stderr
    assert time.monotonic() - started < 30
    assert "late.jsonl line 1003: " in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("files", "args", "fragment"),
    [
        ({"r.jsonl": ""}, ["-D", "r.jsonl"], "holds no request"),
        ({"r.jsonl": '{"message": "a"}\nnot json\n'}, ["-D", "r.jsonl"], "r.jsonl line 2:"),
        ({"r.jsonl": '{"nope": 1}\n'}, ["-D", "r.jsonl"], "has no field nope"),
        ({"r.json": "{}"}, ["-D", "r.json", "--feed", "once"], "--feed takes the lines of"),
        ({"r.jsonl": "{}\n"}, ["-D", "r.jsonl", "--feed", "twice"], "bad --feed 'twice'"),
        ({"r.jsonl": "{}\n"}, ["-D", "r.jsonl", "--feed", "once", "--warmup", "2s"], "timed"),
        (
            {"r.jsonl": "{}\n"},
            ["-D", "r.jsonl", "--load", "ghz"],
            "--load ghz cannot run a feeder file",
        ),
        ({"r.csv": "message\na,b\n"}, ["-D", "r.csv"], "2 values for 1 columns"),
        ({}, ["-D", "missing.jsonl"], "cannot read -D missing.jsonl"),
    ],
)
def test_a_bad_feeder_is_one_line(
    tmp_path: Path, files: dict[str, str], args: list[str], fragment: str
) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    done = run_grpcbench(
        "run", "127.0.0.1:1", "--call", "echo.Echo/Say", "--proto", PROTO, *args, "--dry-run",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1 and fragment in errors[0], done.stderr
    assert "Traceback" not in done.stderr
