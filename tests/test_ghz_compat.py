# ruff: noqa: E501 - ghz's documented command lines are kept whole, as ghz prints them
"""ghz's documented command lines, with `ghz` swapped for `grpcbench run`.

Each line below is taken from ghz v0.120.0's documentation (www/docs/examples.md,
load.md, options.md, output.md), pointed at a hello server (ghz's examples call
helloworld.Greeter, as grpcbench's hello service is), with -n made smaller where
ghz's example would run for a minute. Each one either does what ghz does with it,
checked in the results (one level with ghz's defaults, connections as ghz counts
them, proto paths found under the import paths), or is refused by name with its
reason. The ghz table on docs/own-service.md and the README's list of flags are
``grpcbench.run.ghz_promises`` (scripts/render_results.py; tests/test_docs_results.py).
"""

from __future__ import annotations

import json
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import descriptor_pb2

from grpcbench.base.resources import protos_dir
from grpcbench.proto import helloworld_pb2
from grpcbench.run import ghz_compat
from tests.conftest import GRPCBENCH, module_server

pytestmark = pytest.mark.integration

DATA = """-d '{"name":"Joe"}'"""
# (ghz's command line after `ghz`, concurrency, calls, connections) - None: refused.
DOCUMENTED: list[tuple[str, int | None, int | None, int | None]] = [
    (f"--insecure --proto ./greeter.proto --call helloworld.Greeter.SayHello {DATA} ADDR",
     50, 200, 1),
    (f"--insecure --call helloworld.Greeter.SayHello {DATA} ADDR", 50, 200, 1),  # reflection
    (f"""--insecure --proto ./greeter.proto --call helloworld.Greeter.SayHello {DATA} -m '{{"trace_id":"{{{{.RequestNumber}}}}", "timestamp":"{{{{.TimestampUnix}}}}"}}' ADDR""",
     50, 200, 1),
    ("""--insecure --proto ./greeter.proto --call helloworld.Greeter.SayHello -d '[{"name":"Joe"},{"name":"Bob"}]' ADDR""",
     50, 200, 1),
    (f"--proto ./greeter.proto --call helloworld.Greeter.SayHello {DATA} -n 2000 -c 20 ADDR",
     20, 2000, 1),
    (f"--proto ./greeter.proto --call helloworld.Greeter.SayHello {DATA} -n 2000 -c 20"
     " --connections=10 ADDR", 20, 2000, 10),
    ("""--protoset ./bundle.protoset --call helloworld.Greeter.SayHello -d '{"name":"Bob"}' -n 1000 -c 10 ADDR""",
     10, 1000, 1),
    ("""--insecure --async --proto /protos/helloworld.proto --call helloworld.Greeter/SayHello -c 10 -n 400 --rps 200 -d '{"name":"{{.WorkerID}}"}' ADDR""",
     10, 400, 1),
    ("--insecure --proto helloworld.proto -i /protos --call helloworld.Greeter.SayHello"
     f" {DATA} -c 5 -n 50 ADDR", 5, 50, 1),
    (f"--insecure --proto ./greeter.proto --call helloworld.Greeter.SayHello {DATA}"
     """ --skipFirst 10 --name 'Greeter SayHello' --tags '{"env":"staging"}' ADDR""",
     50, 190, 1),  # ghz's -n (200) counts the skipped calls
    (f"--insecure --proto ./greeter.proto --call helloworld.Greeter.SayHello {DATA}"
     " -c 5 -z 1s -x 30s ADDR", 5, None, 1),
    # The config's max-duration: ghz's binary runs that long and ignores -n and total.
    ("--config ./config.json", 50, None, 1),
    ("--config ./config.json -c 20 -n 1000", 20, None, 1),  # the command line wins
    (f"""--insecure --proto ./protos/greeter.proto --call helloworld.Greeter.SayHello {DATA} -c 5 -n 50 -m '{{"request-id":"{{{{.RequestNumber}}}}"}}' --debug ./logs/debug.json ADDR""",
     5, 50, 1),
    ("--proto ./greeter.proto --call helloworld.Greeter.SayHello -B ./hello_request_data.bin"
     " ADDR", 50, 200, 1),
    ("--proto ./greeter.proto --call helloworld.Greeter.SayHello -e ADDR", 50, 200, 1),  # gzip
    # load.md:58, shortened (-n 10000 and 5s steps run 85 s): ghz's pacer, -c caps in flight
    ("""--insecure --async --proto /protos/helloworld.proto --call helloworld.Greeter/SayHello -c 10 -n 300 --load-schedule=step --load-start=50 --load-end=150 --load-step=10 --load-step-duration=200ms -d '{"name":"{{.WorkerID}}"}' ADDR""",
     10, 300, 1),
]  # fmt: skip


@pytest.fixture(scope="module")
def hello() -> Iterator[str]:
    with module_server("grpcio-aio", "hello") as address:
        yield address


def _workdir(tmp_path: Path) -> Path:
    """ghz's examples' files: ./greeter.proto, /protos/helloworld.proto, a protoset."""
    proto = (protos_dir() / "grpcbench" / "proto" / "helloworld.proto").read_text()
    proto = proto.replace("option java_package", "// option java_package")
    (tmp_path / "greeter.proto").write_text(proto)
    (tmp_path / "protos").mkdir()
    (tmp_path / "protos" / "helloworld.proto").write_text(proto)
    (tmp_path / "protos" / "greeter.proto").write_text(proto)
    bundle = descriptor_pb2.FileDescriptorSet()
    helloworld_pb2.DESCRIPTOR.CopyToProto(bundle.file.add())
    (tmp_path / "bundle.protoset").write_bytes(bundle.SerializeToString())
    request = helloworld_pb2.HelloRequest(name="Joe").SerializeToString()
    (tmp_path / "hello_request_data.bin").write_bytes(request)
    config = {  # ghz's example_config.md, pointed at the files above
        "proto": "./greeter.proto", "call": "helloworld.Greeter.SayHello", "total": 2000,
        "concurrency": 50, "data": {"name": "Joe"},
        "metadata": {"foo": "bar", "trace_id": "{{.RequestNumber}}",
                     "timestamp": "{{.TimestampUnix}}"},
        "import-paths": [str(tmp_path / "protos")], "max-duration": "2s", "host": "ADDR",
        "insecure": True,  # the test server speaks plaintext (ghz's default is TLS)
    }  # fmt: skip
    (tmp_path / "config.json").write_text(json.dumps(config))
    return tmp_path


def _level(path: Path) -> dict[str, Any]:
    (level,) = json.loads(path.read_text())["levels"]
    assert isinstance(level, dict)
    return level


@pytest.mark.parametrize(("line", "concurrency", "calls", "connections"), DOCUMENTED)
def test_a_documented_ghz_line(
    hello: str, tmp_path: Path, line: str, concurrency: int | None, calls: int | None,
    connections: int | None,
) -> None:  # fmt: skip
    work = _workdir(tmp_path)
    config = work / "config.json"
    config.write_text(config.read_text().replace("ADDR", hello))
    line = line.replace("ADDR", hello).replace(" /protos", f" {work / 'protos'}")
    # The server speaks plaintext; a ghz line's default is TLS (tests/conformance runs
    # such lines against TLS), so a line without --insecure gets it.
    insecure = [] if "--insecure" in line or "--config" in line else ["--insecure"]
    argv = [*GRPCBENCH, "run", *insecure, *shlex.split(line), "--output", str(work / "r.json")]
    result = subprocess.run(argv, cwd=work, capture_output=True, text=True, timeout=120,
                            check=False)  # fmt: skip
    if concurrency is None:
        assert result.returncode == 2, result.stderr
        errors = [x for x in result.stderr.splitlines() if "grpcbench: error:" in x]
        assert len(errors) == 1 and "is not supported" in errors[0], result.stderr
        return
    assert result.returncode == 0, result.stderr
    level = _level(work / "r.json")
    load = level["load"]
    assert load["statuses"] == {"OK": load["statuses"]["OK"]}  # every call OK
    assert level["plan"]["concurrency"] == concurrency
    if calls is not None:
        assert load["statuses"]["OK"] == calls
    if "-x" in line or "--config" in line:  # ghz's binary: -x is the run's duration
        settings = json.loads((work / "r.json").read_text())["options"]["load"]
        assert settings["duration_s"] == (30.0 if "-x 30s" in line else 2.0)
        assert settings["requests"] == 0
    assert load["connections"] == connections
    if "--debug" in line:
        assert "level finished" in (work / "logs" / "debug.json").read_text()
    if "--rps" in line:
        assert level["plan"]["rate"] == 200 and load["schedule_lag"] is not None
    if "--name" in line:
        options = json.loads((work / "r.json").read_text())["options"]
        assert options["name"] == "Greeter SayHello" and options["tags"] == {"env": "staging"}
        assert "Greeter SayHello" in result.stderr  # shown in the header


def test_ghz_json_output_is_ghz_s_own_layout(hello: str, tmp_path: Path) -> None:
    """-O json -o: ghz's runner.Report fields, durations in nanoseconds."""
    argv = [*GRPCBENCH, "run", "--insecure", "--call", "helloworld.Greeter.SayHello",
            "-d", '{"name":"Joe"}', "-n", "300", "-O", "json", "-o", str(tmp_path / "g.json"),
            hello]  # fmt: skip
    result = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / "g.json").read_text())
    assert report["count"] == 300 and report["statusCodeDistribution"] == {"OK": 300}
    assert report["options"]["concurrency"] == 50 and report["errorDistribution"] == {}
    assert [d["percentage"] for d in report["latencyDistribution"]] == [10, 25, 50, 75, 90, 95, 99]
    assert 0 < report["fastest"] <= report["average"] <= report["slowest"]
    assert report["rps"] > 0 and report["total"] > report["slowest"]
    assert sum(bucket["count"] for bucket in report["histogram"]) == 300


def test_a_refused_flag_is_named_with_its_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    """ghz v0.120's flags are all taken now; a flag the table refuses (one made up here,
    as a later ghz's could be) is refused by name with its reason, "--" aside."""
    from grpcbench.base.errors import UsageError
    from grpcbench.cli.argv import ghz_flags_of

    monkeypatch.setattr(ghz_compat, "REFUSED", {"--shiny, -S": "not ghz v0.120's"})
    for flag in ("--shiny", "-S", "--shiny=1"):
        with pytest.raises(UsageError, match="ghz's (--shiny|-S) is not supported: not ghz"):
            ghz_flags_of(["grpcbench", "run", flag, "x"])
    assert ghz_flags_of(["grpcbench", "run", "--", "--shiny"])[-1] == "--shiny"


def test_stream_pacing_and_reflection_metadata(tmp_path: Path) -> None:
    """--stream-interval spaces a client stream's messages; --stream-call-duration
    half-closes it early; --reflect-metadata lets reflection through a server that
    demands a token on every call."""
    from tests.support.echo_server import echo_server

    three = '[{"message": "a"}, {"message": "b"}, {"message": "c"}]'
    with echo_server(token="t0k", guard_reflection=True) as address:
        base = [*GRPCBENCH, "run", "--insecure", "--call", "echo.Echo.Collect", "-d", three,
                "-m", "authorization=Bearer t0k", "-c", "2", "-n", "10", address]  # fmt: skip
        blind = subprocess.run(base, capture_output=True, text=True, timeout=60, check=False)
        assert blind.returncode == 2 and "reflection" in blind.stderr, blind.stderr
        reflect = ["--reflect-metadata", '{"authorization": "Bearer t0k"}']
        for pacing, sent, at_least_ms in (
            (["--stream-interval", "40ms"], 3, 80),
            (["--stream-interval", "40ms", "--stream-call-duration", "60ms"], 2, 40),
        ):
            out = tmp_path / "r.json"
            result = subprocess.run(
                [*base, *reflect, *pacing, "--output", str(out)],
                capture_output=True, text=True, timeout=60, check=False,
            )  # fmt: skip
            assert result.returncode == 0, result.stderr
            (level,) = json.loads(out.read_text())["levels"]
            stream = level["load"]["stream"]
            assert stream["sent"] == sent * 10, stream
            # Each message after the first has a due time on the stream's pacer.
            assert stream["send_lag"]["count"] == (sent - 1) * 10, stream
            assert "Message send lag p99" in result.stdout
            # (an event loop timer may fire up to a millisecond early)
            assert level["load"]["latency"]["min_us"] >= (at_least_ms - 2) * 1000
            assert "Sent messages/call" in result.stdout and "Items" not in result.stdout


def test_a_status_the_size_limit_provokes_is_measured_and_debug_logs_the_run(
    hello: str, tmp_path: Path
) -> None:
    """ghz: --max-recv-message-size 5 counts ResourceExhausted calls (no pre-flight
    stop); --debug FILE logs the run, secrets masked."""
    log = tmp_path / "debug.log"
    argv = [*GRPCBENCH, "run", "--insecure", "--call", "helloworld.Greeter.SayHello",
            "-d", '{"name":"Joe"}', "-m", '{"authorization": "Bearer s3cr3t"}', "-n", "20",
            "--max-recv-message-size", "5", "--expect-status", "ResourceExhausted",
            "--debug", str(log), "-O", "json", hello]  # fmt: skip
    result = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["statusCodeDistribution"] == {"ResourceExhausted": 20}
    text = log.read_text()
    assert "level finished" in text and "ResourceExhausted 20" in text and "s3cr3t" not in text
    assert text.splitlines()[-1].endswith("end: done")


@pytest.mark.parametrize("loop", [[], ["--rps", "400", "--client-stack", "grpcio"]])
def test_worker_ids_and_request_numbers_are_ghz_s_and_the_preflight_call_is_apart(
    loop: list[str],
) -> None:
    """{{.WorkerID}} is "g<worker>c<connection>" (after --name and a colon), in a closed
    loop and in an open one (ghz's --rps: one of c workers), each RequestNumber
    0..n-1 reaches the server once, and the pre-flight call (of a --target line; a ghz
    line, the host last, makes none) is worker "preflight", numbered after the level's."""
    from tests.support.echo_server import echo_server

    seen: list[dict[str, str]] = []
    with echo_server(seen=seen) as address:
        argv = [*GRPCBENCH, "run", "--insecure", "--call", "echo.Echo.Say",
                "-d", '{"message": "hi"}', "-m",
                '{"worker": "{{.WorkerID}}", "number": "{{.RequestNumber}}"}',
                "-c", "4", "-n", "40", "--connections", "2", "--name", "nightly", *loop]  # fmt: skip
        ghz_line = subprocess.run([*argv, address], capture_output=True, text=True,
                                  timeout=120, check=False)  # fmt: skip
        assert ghz_line.returncode == 0, ghz_line.stderr
        assert len(seen) == 40 and all(call["worker"] != "preflight" for call in seen)
        seen.clear()
        result = subprocess.run([*argv, "--target", address], capture_output=True, text=True,
                                timeout=120, check=False)  # fmt: skip
    assert result.returncode == 0, result.stderr
    preflight = [call for call in seen if call["worker"] == "preflight"]
    assert [call["number"] for call in preflight] == ["40"]
    load = [call for call in seen if call["worker"] != "preflight"]
    assert sorted(int(call["number"]) for call in load) == list(range(40))
    workers = {"nightly:g0c0", "nightly:g1c1", "nightly:g2c0", "nightly:g3c1"}
    assert {call["worker"] for call in load} == workers
