"""ghz's command lines, run by real ghz and by grpcbench, compared at the server.

Each line of ``ghz_lines.LINES`` (ghz's documented lines, and one per flag of
its usage) runs through ghz v0.120 and, with the binary's name swapped, through
``grpcbench run``, both against the recording proxy in front of a server for
ghz's schemas. What the proxy saw is compared aspect by aspect (calls, request
messages in order per call, metadata with templates rendered, compression,
deadlines, ``:authority``, SNI, connections), with the exit codes and each
``-O`` format's fields. A line may differ only in the aspects it lists, each an
accepted difference of ``ghz_promises.DIFFERENCES`` (rendered into
docs/own-service.md); a listed difference that is gone fails too. Where ghz is
absent the suite is skipped, never faked (CI installs ghz; there its absence fails).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from grpcbench.rpc.schema import compile_proto
from grpcbench.run.ghz_promises import DIFFERENCES
from tests.conformance.ghz_lines import LINES, Line
from tests.conformance.recorded import VARYING, Decoder, differing, facts
from tests.conftest import GRPCBENCH, REPO
from tests.support.any_method_server import any_method_server
from tests.support.echo_server import make_certificates
from tests.support.recording_proxy import SeenConnection, recording_proxy
from tests.test_ghz import ghz_binary

pytestmark = pytest.mark.integration

HERE = Path(__file__).parent / "ghz_testdata"
SERVICES = ("helloworld.Greeter", "routeguide.RouteGuide", "bytes.ImageService",
            "wrapped.WrappedService")  # fmt: skip
TIMEOUT_S = 120
# A service the server does not serve: every call ends Unimplemented.
UNSERVED = """syntax = "proto3";
package nothere;
service Nope { rpc Call (Req) returns (Req); }
message Req { string name = 1; }
"""
# The aspects of the traffic (recorded.facts) each accepted difference shows in.
ASPECTS_OF = {
    "skiptls-name": ("authority", "sni", "idle-connections"),
    "cpus-connections": ("connections",),
    "exit-on-failure": ("exit-code",),
}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The files ghz's documented lines name, in one directory (their cwd)."""
    work = tmp_path_factory.mktemp("ghz-lines")
    greeter = (HERE / "greeter.proto").read_text()
    (work / "protos").mkdir()
    (work / "testdata").mkdir()
    (work / "logs").mkdir()
    for path in ("greeter.proto", "protos/greeter.proto", "protos/helloworld.proto"):
        (work / path).write_text(greeter)
    (work / "protos/bytes.proto").write_text((HERE / "bytes.proto").read_text())
    (work / "protos/unserved.proto").write_text(UNSERVED)
    (work / "testdata/wrapped.proto").write_text((HERE / "wrapped.proto").read_text())
    # grpc-go's route guide is written in edition 2023, which ghz's parser cannot read:
    # the same messages in proto3 (its fields have implicit presence, proto3's).
    route_guide = (REPO / "examples/route_guide/route_guide.proto").read_text()
    route_guide = route_guide.replace('edition = "2023";', 'syntax = "proto3";').replace(
        "option features.field_presence = IMPLICIT;", ""
    )
    (work / "protos/route_guide.proto").write_text(route_guide)
    (work / "bundle.protoset").write_bytes(compile_proto(str(work / "greeter.proto"), [str(work)]))
    (work / "hello_request_data.bin").write_bytes(b"\n\x03Joe")  # HelloRequest(name="Joe")
    # Three length-delimited HelloRequests (Joe, Ann, "{{.WorkerID}}": no template).
    requests = [b"\n\x03Joe", b"\n\x03Ann", b"\n\x0d{{.WorkerID}}"]
    (work / "hello_requests.bin").write_bytes(b"".join(bytes([len(r)]) + r for r in requests))
    (work / "data.json").write_text('[{"name":"Ann"},{"name":"Ben"},{"name":"Cy"}]')
    (work / "metadata.json").write_text('{"tenant":"t1","trace":"{{.RequestNumber}}"}')
    make_certificates(work, loopback=True)  # ghz checks 127.0.0.1 without --cname
    return work


@pytest.fixture(scope="module")
def upstream(workdir: Path) -> Any:
    protos = [(str(workdir / "protos" / name), [str(workdir / "protos")])
              for name in ("greeter.proto", "route_guide.proto", "bytes.proto")]  # fmt: skip
    protos.append((str(workdir / "testdata/wrapped.proto"), [str(workdir / "testdata")]))
    with any_method_server(protos, SERVICES) as served:
        yield served


def _config(workdir: Path, address: str) -> None:
    """ghz's example_config.md, pointed at this run's proxy."""
    config = {
        "proto": "./greeter.proto", "call": "helloworld.Greeter.SayHello", "total": 200,
        "concurrency": 50, "data": {"name": "Joe"},
        "metadata": {"foo": "bar", "trace_id": "{{.RequestNumber}}",
                     "timestamp": "{{.TimestampUnix}}"},
        "import-paths": ["./protos"], "insecure": True, "host": address,
    }  # fmt: skip
    (workdir / "config.json").write_text(json.dumps(config))
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))  # ghz reads YAML too


def _run(argv: list[str], workdir: Path, stdin: str | None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SSL_CERT_FILE": str(workdir / "ca.pem")}  # ghz's system CAs
    source = (workdir / stdin).open("rb") if stdin else subprocess.DEVNULL
    try:
        done = subprocess.run(argv, cwd=workdir, stdin=source, capture_output=True,
                              timeout=TIMEOUT_S, check=False, env=env)  # fmt: skip
    finally:
        if stdin:
            source.close()  # type: ignore[union-attr]
    return subprocess.CompletedProcess(
        done.args,
        done.returncode,
        done.stdout.decode(errors="replace"),
        done.stderr.decode(errors="replace"),
    )


def _settled(recording: Any) -> list[SeenConnection]:
    """What the proxy saw, once the client's last bytes have crossed it."""
    time.sleep(0.3)
    return list(recording.take())


def _tags_value(line: str) -> str:
    """An influx line's ``tags="..."`` as written (a Go map's JSON: keys sorted)."""
    found = re.search(r'tags="(.*?)(?<!\\)"', line)
    return found.group(1) if found else ""


def report_fields(name: str, text: str) -> object:
    """What a ``-O`` format says, without its figures: keys, headers, labels, tags."""
    if name == "json":
        report = json.loads(text)
        return sorted(report), sorted(report.get("options", {}))
    if name == "csv":
        return text.splitlines()[0]
    if name in ("summary", "pretty"):
        return sorted(
            {m.group(1).strip() for m in re.finditer(r"^\s*([A-Za-z][\w ./]*):", text, re.M)}
        )
    if name.startswith("influx"):  # measurement, keys, and how the tags are written
        return sorted({(line.split(" ")[0].split(",")[0],
                        tuple(k.split("=")[0] for k in line.split(" ")[0].split(",")[1:]),
                        tuple(k.split("=")[0] for k in line.split(" ")[1].split(",")),
                        _tags_value(line))
                       for line in text.splitlines() if line.strip()})  # fmt: skip
    if name == "prometheus":
        return sorted({line.split("{")[0].split(" ")[0] for line in text.splitlines()
                       if line and not line.startswith("#")})  # fmt: skip
    raise AssertionError(name)


def _words(line: Line, address: str, workdir: Path) -> list[str]:
    text = line.text.replace("ADDR", address).replace(" /protos", f" {workdir / 'protos'}")
    return shlex.split(text)


def compare(line: Line, workdir: Path, upstream: Any) -> tuple[set[str], str]:
    """Run ``line`` through ghz and grpcbench; the aspects that differ, and a report."""
    address, pool = upstream
    # A line without --insecure speaks TLS (ghz's default, and grpcbench's on a ghz line).
    speaks_tls = line.tls or ("--insecure" not in line.text and "--config" not in line.text)
    tls = (workdir / "server.pem", workdir / "server.key") if speaks_tls else None
    with recording_proxy(address, tls=tls) as (proxy, recording):
        _config(workdir, proxy)
        words = _words(line, proxy, workdir)
        theirs = _run([ghz_binary(), *words], workdir, line.stdin)
        their_traffic = _settled(recording)
        ours = _run([*GRPCBENCH, "run", *words], workdir, line.stdin)
        our_traffic = _settled(recording)
    found: set[str] = set()
    report = (f"ghz exit {theirs.returncode}: {theirs.stderr[-400:]}\n"
              f"grpcbench exit {ours.returncode}: {ours.stderr[-600:]}")  # fmt: skip
    if ours.returncode == 2 and "is not supported" in ours.stderr and their_traffic:
        return {"refused"}, report
    counted = not re.search(r"(^| )(-z|-x|--duration|--max-duration|--stream-call-duration)[ =]",
                            line.text)  # fmt: skip
    varying = "--config" in line.text or any(name in line.text for name in VARYING)
    decoder = Decoder(pool, varying=varying)
    mine, its = facts(our_traffic, decoder, counted), facts(their_traffic, decoder, counted)
    exit_code = {"exit-code"} if theirs.returncode != ours.returncode else set()
    for aspect in differing(mine, its) | exit_code:  # an accepted difference may explain it
        found.add(next((name for name in line.differences
                        if aspect in ASPECTS_OF.get(name, ())), aspect))  # fmt: skip
    report += "\n" + "\n".join(f"{k}: ours {mine[k]!r:.300} ghz {its[k]!r:.300}"
                               for k in sorted(differing(mine, its)))  # fmt: skip
    match = re.search(r" -O (\S+)", line.text)
    if match and " -o " not in line.text and theirs.stdout.strip() and ours.stdout.strip():
        name = match.group(1)
        mine_said, its_said = report_fields(name, ours.stdout), report_fields(name, theirs.stdout)
        if mine_said != its_said:
            found.add("report-fields")
            report += f"\n-O {name}: ours {mine_said} ghz {its_said}"
    return found, report


def test_every_accepted_difference_is_in_the_table_and_the_table_is_used() -> None:
    used = {d for line in LINES for d in line.differences}
    assert used == set(DIFFERENCES), used ^ set(DIFFERENCES)


@pytest.mark.parametrize("line", LINES, ids=[line.source for line in LINES])
def test_the_server_receives_what_ghz_sends(line: Line, workdir: Path, upstream: Any) -> None:
    found, report = compare(line, workdir, upstream)
    assert found == set(line.differences), report
