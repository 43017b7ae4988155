"""Benchmark your own service: any method by proto, protoset or reflection; data,
metadata and TLS; all four RPC kinds; your servicers on every server kind.

The servers here are the tests' own (examples/echo), never the bundled services.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GRPCBENCH, REPO
from tests.support.echo_server import (
    EXAMPLE,
    SERVER_NAME,
    Certificates,
    echo_server,
    make_certificates,
)

PROTO = str(EXAMPLE / "echo.proto")
TOKEN = "s3cr3t-t0ken"
pytestmark = pytest.mark.integration  # every test here calls a server

QUICK = ["-c", "2", "-n", "40", "--warmup", "4"]
needs_ghz = pytest.mark.skipif(shutil.which("ghz") is None, reason="ghz is not installed")


def grpcbench(
    *args: str, cwd: Path | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*GRPCBENCH, "run", *args], capture_output=True, text=True, timeout=timeout, check=False,
        cwd=cwd,
    )  # fmt: skip


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    """The single error line (and no traceback)."""
    assert "Traceback" not in result.stderr, result.stderr
    errors = [line for line in result.stderr.splitlines() if "grpcbench: error:" in line]
    assert len(errors) == 1, result.stderr
    return errors[0]


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    return make_certificates(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def plain() -> Iterator[str]:
    with echo_server() as address:
        yield address


@pytest.fixture(scope="module")
def authenticated() -> Iterator[str]:
    with echo_server(token=TOKEN) as address:
        yield address


@pytest.fixture(scope="module")
def secure(certificates: Certificates) -> Iterator[str]:
    with echo_server(tls=certificates) as address:
        yield address


@pytest.fixture(scope="module")
def protoset(tmp_path_factory: pytest.TempPathFactory) -> str:
    from grpcbench.rpc.schema import compile_proto

    path = tmp_path_factory.mktemp("schema") / "echo.protoset"
    path.write_bytes(compile_proto(PROTO))
    return str(path)


def levels(path: Path) -> list[dict]:  # type: ignore[type-arg]
    return json.loads(path.read_text())["levels"]


# --- the four RPC kinds, three schema sources ----------------------------------


def test_unary_by_proto(plain: str, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    result = grpcbench(
        "--target", plain, "--call", "echo.Echo/Say", "--proto", PROTO,
        "-d", '{"message": "hi"}', *QUICK, "--output", str(out),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    [level] = levels(out)
    assert level["load"]["statuses"] == {"OK": 40}
    call = json.loads(out.read_text())["options"]["call"]
    assert call["method"] == "echo.Echo/Say" and call["schema"] == f"proto {PROTO}"


def test_a_ghz_command_line_with_the_binary_name_swapped(plain: str, tmp_path: Path) -> None:
    """ghz's spelling: --insecure, -z/-t, and the address as the last argument."""
    out = tmp_path / "r.json"
    result = grpcbench(
        "--insecure", "--proto", PROTO, "--call", "echo.Echo.Say", "-d", '{"message": "hi"}',
        "-c", "2", "-z", "300ms", "-t", "5s", "--warmup", "4", "--output", str(out), plain,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    [level] = levels(out)
    assert level["load"]["statuses"].keys() == {"OK"} and level["load"]["statuses"]["OK"] > 0
    assert json.loads(out.read_text())["options"]["targets"] == [plain]


def test_ghz_spelling_contradictions_are_one_line(plain: str) -> None:
    tls = grpcbench("--insecure", "--skipTLS", "--call", "echo.Echo/Say", *QUICK, plain)
    assert tls.returncode == 2
    assert "--insecure (plaintext) contradicts the TLS options" in one_error_line(tls)
    twice = grpcbench("--target", "127.0.0.1:1", "--call", "echo.Echo/Say", *QUICK, plain)
    assert twice.returncode == 2
    assert f"two targets: --target 127.0.0.1:1 and {plain}" in one_error_line(twice)


@pytest.mark.parametrize("stack", ["wire", "grpcio"])
def test_server_streaming_by_protoset_counts_messages(
    plain: str, protoset: str, tmp_path: Path, stack: str
) -> None:
    """Per message, on both client stacks: the time to the first, then each gap to
    the next (4 gaps for 5 messages; those that came in one read count as one)."""
    out = tmp_path / "r.json"
    result = grpcbench(
        "--target", plain, "--call", "echo.Echo.Expand", "--protoset", protoset,
        "-d", '{"message": "hi", "repeat": 5}', *QUICK, "--output", str(out),
        "--client-stack", stack,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    [level] = levels(out)
    stream = level["load"]["stream"]
    assert level["load"]["statuses"] == {"OK": 40}
    assert stream["calls"] == 40 and stream["messages"] == 200
    assert stream["first_message"]["count"] == 40 and stream["bytes"] > 0
    assert stream["gap"]["count"] == 160
    assert stream["gap"]["max_us"] <= level["load"]["latency"]["max_us"]
    assert stream["round_trip"] is None
    assert "Message gap p99" in result.stdout and "Round trip" not in result.stdout


def test_client_streaming_by_reflection(plain: str, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    result = grpcbench(
        "--target", plain, "--call", "echo.Echo/Collect",
        "-d", '[{"message": "a"}, {"message": "b"}]', "--stream-messages", "3", *QUICK,
        "--output", str(out),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert levels(out)[0]["load"]["statuses"] == {"OK": 40}
    assert json.loads(out.read_text())["options"]["call"]["schema"] == "reflection"


def test_bidi_reads_until_the_server_closes(plain: str, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    result = grpcbench(
        "--target", plain, "--call", "echo.Echo/Chat",
        "-d", '[{"message": "a"}, {"message": "b"}, {"message": "c"}]', *QUICK,
        "--output", str(out),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    [level] = levels(out)
    assert level["load"]["statuses"] == {"OK": 40}
    assert level["load"]["stream"]["messages"] == 120  # 3 sent, 3 back, per call


@pytest.mark.parametrize("stack", ["wire", "grpcio"])
def test_bidi_round_trips_pair_each_request_with_its_reply(
    plain: str, tmp_path: Path, stack: str
) -> None:
    """--stream-round-trip on an echo: one round trip per request, each at most its
    call's latency, 20 ms apart as sent (--stream-interval) so each is its own (4 ms
    apart, a grpc.aio round trip on a loaded 2-core CI machine averaged 5.6 ms)."""
    out = tmp_path / "r.json"
    result = grpcbench(
        "--target", plain, "--call", "echo.Echo/Chat", "--stream-round-trip",
        "--stream-interval", "20ms", "-d", '[{"message": "a"}, {"message": "b"}, {"message": "c"}]',
        *QUICK, "--output", str(out), "--client-stack", stack,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    [level] = levels(out)
    stream = level["load"]["stream"]
    assert level["load"]["statuses"] == {"OK": 40}
    assert stream["round_trip"]["count"] == 120 and stream["gap"]["count"] == 80
    assert stream["round_trip"]["max_us"] <= level["load"]["latency"]["max_us"]
    # Replies follow requests sent 20 ms apart: the gaps are the pacing (each call's sum
    # of gaps is 40 ms plus its last trip less its first), the trips are the echo's.
    gap, trip = (stream[k]["total_us"] / stream[k]["count"] for k in ("gap", "round_trip"))
    assert gap >= 15_000 and trip < gap
    assert "Round trip p99" in result.stdout


def test_round_trips_need_a_bidi_stream(plain: str) -> None:
    result = grpcbench("--target", plain, "--call", "echo.Echo/Say", "--stream-round-trip", *QUICK)
    assert result.returncode == 2
    assert "--stream-round-trip: echo.Echo/Say is unary" in one_error_line(result)


# --- metadata, checked by the server ---------------------------------------------


def test_metadata_reaches_the_server_and_is_never_shown(authenticated: str, tmp_path: Path) -> None:
    out, markdown = tmp_path / "r.json", tmp_path / "r.md"
    result = grpcbench(
        "--target", authenticated, "--call", "echo.Echo/Say", "-d", '{"message": "hi"}',
        "-m", f"authorization=Bearer {TOKEN}", *QUICK, "--output", str(out),
        "--markdown", str(markdown),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert levels(out)[0]["load"]["statuses"] == {"OK": 40}
    for text in (result.stdout, result.stderr, out.read_text(), markdown.read_text()):
        assert TOKEN not in text
    assert json.loads(out.read_text())["options"]["call"]["metadata_keys"] == ["authorization"]


def test_metadata_file_and_ghz_json_form(authenticated: str, tmp_path: Path) -> None:
    metadata = tmp_path / "metadata.json"
    metadata.write_text(json.dumps({"authorization": f"Bearer {TOKEN}"}))
    from_file = grpcbench(
        "--target", authenticated, "--call", "echo.Echo/Say", "-M", str(metadata), *QUICK
    )
    assert from_file.returncode == 0, from_file.stderr
    as_json = grpcbench(
        "--target", authenticated, "--call", "echo.Echo/Say",
        "-m", json.dumps({"authorization": f"Bearer {TOKEN}"}), *QUICK,
    )  # fmt: skip
    assert as_json.returncode == 0, as_json.stderr


# --- pre-flight: each failure one line, a non-zero exit, no traceback --------------


def test_missing_credentials_fail_before_any_load(authenticated: str) -> None:
    result = grpcbench("--target", authenticated, "--call", "echo.Echo/Say", *QUICK)
    assert result.returncode == 5
    line = one_error_line(result)
    assert "Unauthenticated" in line and "-m" in line
    assert "concurrency 2 [builtin]" not in result.stderr  # no level ran


def test_unimplemented_method_is_named(plain: str) -> None:
    hello = str(REPO / "protos/grpcbench/proto/helloworld.proto")
    result = grpcbench(
        "--target", plain, "--call", "helloworld.Greeter/SayHello", "--proto", hello, *QUICK
    )
    assert result.returncode == 5
    line = one_error_line(result)
    assert "does not implement helloworld.Greeter/SayHello" in line and "Unimplemented" in line


def test_unknown_method_lists_the_known_ones(plain: str) -> None:
    by_proto = grpcbench("--target", plain, "--call", "echo.Echo/Shout", "--proto", PROTO, *QUICK)
    assert by_proto.returncode == 2
    line = one_error_line(by_proto)
    assert "no method Shout" in line and "echo.Echo/Say" in line and "echo.Echo/Chat" in line
    by_reflection = grpcbench("--target", plain, "--call", "other.Service/Say", *QUICK)
    assert by_reflection.returncode == 2
    assert "echo.Echo" in one_error_line(by_reflection)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ('{"nope": 1}', "does not fit echo.EchoRequest"),
        ('{"repeat": "many"}', "does not fit echo.EchoRequest"),
        ("{not json", "not valid JSON"),
        ('{"message": "{{.Nope}}"}', "unsupported template action"),
    ],
)
def test_a_request_that_does_not_fit_fails_before_anything_starts(data: str, expected: str) -> None:
    # No target is reachable at this address: the request is checked first.
    result = grpcbench("--target", "127.0.0.1:9", "--call", "echo.Echo/Say", "--proto", PROTO,
                       "-d", data, *QUICK)  # fmt: skip
    assert result.returncode == 2
    assert expected in one_error_line(result)


# --- TLS ------------------------------------------------------------------------


def test_tls_with_ca_and_cname(secure: str, certificates: Certificates, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    result = grpcbench(
        "--target", secure, "--call", "echo.Echo/Say", "--cacert", str(certificates.ca),
        "--cname", SERVER_NAME, *QUICK, "--output", str(out),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert levels(out)[0]["load"]["statuses"] == {"OK": 40}
    assert "TLS" in json.loads(out.read_text())["options"]["call"]["security"]


def test_skip_tls(secure: str) -> None:
    result = grpcbench("--target", secure, "--call", "echo.Echo/Say", "--skipTLS", *QUICK)
    assert result.returncode == 0, result.stderr


def test_plaintext_client_to_a_tls_server(secure: str) -> None:
    result = grpcbench("--target", secure, "--call", "echo.Echo/Say", "--proto", PROTO, *QUICK)
    assert result.returncode == 5
    assert "speaks TLS: give --cacert" in one_error_line(result)


def test_tls_client_to_a_plaintext_server(plain: str, certificates: Certificates) -> None:
    result = grpcbench(
        "--target", plain, "--call", "echo.Echo/Say", "--proto", PROTO,
        "--cacert", str(certificates.ca), "--cname", SERVER_NAME, *QUICK,
    )  # fmt: skip
    assert result.returncode == 5
    assert "speaks plaintext: drop the TLS options" in one_error_line(result)


@pytest.mark.parametrize("command", ["run", "list"])
def test_tls_client_to_a_plaintext_server_asked_for_reflection(
    plain: str, certificates: Certificates, command: str
) -> None:
    """The reflection channel's first failure is explained at once, in one line, with no
    log line of gRPC's C core (it retried the handshake for the whole 10 s before)."""
    import time

    from grpcbench.rpc.schema import REFLECTION_TIMEOUT_S

    call = ["--target", plain, "--call", "echo.Echo/Say", *QUICK] if command == "run" else [plain]
    started = time.monotonic()
    result = subprocess.run(
        [*GRPCBENCH, command, *call, "--cacert", str(certificates.ca), "--cname", SERVER_NAME],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert time.monotonic() - started < REFLECTION_TIMEOUT_S  # not the timeout's path
    assert result.returncode != 0
    assert "speaks plaintext: drop the TLS options" in one_error_line(result)
    assert "ssl_transport_security" not in result.stderr, result.stderr


def test_wrong_server_name(secure: str, certificates: Certificates) -> None:
    result = grpcbench(
        "--target", secure, "--call", "echo.Echo/Say", "--proto", PROTO,
        "--cacert", str(certificates.ca), *QUICK,
    )  # fmt: skip
    assert result.returncode == 5
    assert "TLS handshake" in one_error_line(result) or "--cname" in one_error_line(result)


# --- ghz with the same options --------------------------------------------------


@needs_ghz
def test_ghz_gets_the_same_call_metadata_and_tls(
    certificates: Certificates, tmp_path: Path
) -> None:
    out = tmp_path / "r.json"
    with echo_server(token=TOKEN, tls=certificates) as address:
        result = grpcbench(
            "--target", address, "--load", "builtin,ghz", "--call", "echo.Echo/Expand",
            "-d", '{"message": "x", "repeat": 3}', "-m", f"authorization=Bearer {TOKEN}",
            "--cacert", str(certificates.ca), "--cname", SERVER_NAME, *QUICK,
            "--output", str(out),
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    found = {level["load"]["driver"]: level["load"]["statuses"] for level in levels(out)}
    assert found == {"builtin": {"OK": 40}, "ghz": {"OK": 40}}
    assert TOKEN not in result.stdout + result.stderr + out.read_text()


def test_ghz_command_keeps_metadata_off_its_command_line(tmp_path: Path) -> None:
    from grpcbench.load.ghz import ghz_command
    from grpcbench.rpc.call import MethodCall
    from grpcbench.rpc.schema import MethodSchema, compile_proto
    from tests.support.factories import make_spec

    call = MethodCall.build(
        MethodSchema("echo.Echo/Say", compile_proto(PROTO)), '{"message": "{{.RequestNumber}}"}',
        json.dumps({"authorization": f"Bearer {TOKEN}"}),
    )  # fmt: skip
    spec = make_spec(target="127.0.0.1:1", service="", concurrency=2, requests=10,
                    call=call.to_json())  # fmt: skip
    argv = ghz_command("ghz", spec, 10, 0.0, tmp_path, tmp_path)
    assert not any(TOKEN in arg for arg in argv)
    assert f"--metadata-file={tmp_path / 'metadata.json'}" in argv
    assert "--call=echo.Echo.Say" in argv and "--insecure" in argv
    assert (tmp_path / "metadata.json").stat().st_mode & 0o077 == 0


@pytest.mark.skipif(not hasattr(os, "memfd_create"), reason="memfd is Linux's")
def test_ghz_takes_metadata_from_memory_never_from_a_disk(tmp_path: Path) -> None:
    """ghz reads --metadata-file from an in-memory file it inherits (/dev/fd/N): nothing
    holds the secret on a disk, so a kill -9 leaves none behind (a file in the run's
    temporary directory did)."""
    from grpcbench.base.secrets import SecretFiles
    from grpcbench.load.ghz import ghz_command
    from grpcbench.rpc.call import MethodCall
    from grpcbench.rpc.schema import MethodSchema, compile_proto
    from tests.support.factories import make_spec

    metadata = json.dumps({"authorization": f"Bearer {TOKEN}"})
    call = MethodCall.build(MethodSchema("echo.Echo/Say", compile_proto(PROTO)), "{}", metadata)
    spec = make_spec(target="127.0.0.1:1", service="", concurrency=2, requests=10,
                    call=call.to_json())  # fmt: skip
    with SecretFiles() as secrets:
        argv = ghz_command("ghz", spec, 10, 0.0, tmp_path, tmp_path, secrets)
        (given,) = [arg for arg in argv if arg.startswith("--metadata-file=")]
        path = given.partition("=")[2]
        assert path == f"/dev/fd/{secrets.fds[0]}" and Path(path).read_text() == metadata
    assert not secrets.fds
    assert not [f for f in tmp_path.rglob("*") if f.is_file() and TOKEN in f.read_text("latin-1")]


# --- your servicers on every server kind -------------------------------------------


def test_the_example_runs_on_every_server_kind(tmp_path: Path) -> None:
    """From the example's directory, as the README shows: the module there loads,
    and a stray uvloop.py there does not shadow the real one in the servers."""
    workdir = tmp_path / "echo"
    shutil.copytree(EXAMPLE, workdir, ignore=shutil.ignore_patterns("__pycache__"))
    (workdir / "uvloop.py").write_text("raise ImportError('the stray uvloop.py was imported')\n")
    out = tmp_path / "r.json"
    result = grpcbench(
        "--scenario", "echo.toml", "-s", "grpcio:workers=2", "-s", "grpcio-aio+uvloop",
        "-s", "grpclib+uvloop", *QUICK, "--output", str(out), cwd=workdir, timeout=240,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    found = {level["server"]: level["load"]["statuses"] for level in levels(out)}
    assert found == {
        "grpcio:workers=2": {"OK": 40},
        "grpcio-aio+uvloop": {"OK": 40},
        "grpclib+uvloop": {"OK": 40},
    }


def test_own_servicers_with_metadata_by_reflection(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    result = grpcbench(
        "--service", "echo_service:SERVICE", "-s", "grpclib", "-s", "grpcio-aio",
        "--server-param", f"token={TOKEN}", "--call", "echo.Echo/Chat",
        "-d", '[{"message": "a"}, {"message": "b"}]', "-m", f"authorization=Bearer {TOKEN}",
        *QUICK, "--output", str(out), cwd=EXAMPLE, timeout=240,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert [level["load"]["stream"]["messages"] for level in levels(out)] == [80, 80]
    assert TOKEN not in out.read_text() + result.stdout + result.stderr


def test_a_kind_the_service_cannot_serve_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "only_sync.py").write_text(
        "import echo_pb2_grpc, echo_service\n"
        "from grpcbench.services.base import ServiceDefinition\n"
        "SERVICE = ServiceDefinition(name='only-sync', service_names=('echo.Echo',),\n"
        "    register_grpcio=lambda server, params: echo_pb2_grpc.add_EchoServicer_to_server(\n"
        "        echo_service.GrpcioEcho(params), server))\n"
    )
    for name in ("echo_pb2.py", "echo_pb2_grpc.py", "echo_grpc.py", "echo_service.py"):
        shutil.copy(EXAMPLE / name, tmp_path / name)
    result = grpcbench("--service", "only_sync:SERVICE", "-s", "grpclib", "--call", "echo.Echo/Say",
                       *QUICK, cwd=tmp_path)  # fmt: skip
    assert result.returncode == 2
    line = one_error_line(result)
    assert "no servicer for server kind grpclib" in line and "grpclib_handlers" in line
    no_call = grpcbench("--service", "only_sync:SERVICE", "-s", "grpcio", *QUICK, cwd=tmp_path)
    assert no_call.returncode == 2 and "give --call" in one_error_line(no_call)


# --- error rate -----------------------------------------------------------------


def test_max_error_rate_rule() -> None:
    from dataclasses import replace

    from grpcbench.run.arguments import RunArgs
    from grpcbench.run.options import build_run_options
    from tests.support.factories import level

    def failure(options: Any, statuses: dict[str, int]) -> str | None:
        return options.level_failure(level("grpclib", statuses=statuses))

    options = build_run_options(RunArgs(load="fake", concurrency="2"))
    assert failure(options, {"OK": 10}) is None
    assert failure(options, {"OK": 9, "Unavailable": 1}) is None  # default: all failed
    assert "all 3 calls failed" in (failure(options, {"Unavailable": 3}) or "")
    strict = replace(options, max_error_rate=0.05)
    assert failure(strict, {"OK": 96, "Unavailable": 4}) is None
    assert "over --max-error-rate" in (failure(strict, {"OK": 90, "Unavailable": 10}) or "")
