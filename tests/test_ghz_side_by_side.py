# ruff: noqa: E501 - ghz's command lines are kept whole, as its documentation prints them
"""ghz's command lines, run by ghz and by grpcbench against one logging server.

Each line is given to ghz v0.120 and, with the binary's name swapped, to
`grpcbench run`; the server records every call it serves (tests/support/
logging_greeter.py). What it saw must match: the number of calls, the request
data, the metadata and the connections: exactly, since a ghz line makes no pre-flight
call and opens no connection before the load's, as ghz (docs/own-service.md). Lines without
``--insecure`` get it, for both: the server speaks plaintext and a ghz line's
default is TLS (tests/conformance runs such lines against TLS). Where ghz is absent the comparison is skipped,
never faked (CI installs ghz, and there its absence fails).
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import GRPCBENCH
from tests.support.logging_greeter import SeenCall, logging_greeter
from tests.test_ghz import ghz_binary
from tests.test_ghz_compat import _workdir

pytestmark = pytest.mark.integration

CALL = "--proto ./greeter.proto --call helloworld.Greeter.SayHello"
JOE = """-d '{"name":"Joe"}'"""
# Template output that differs between any two runs: compared by shape.
VARYING = ("Timestamp", "UUID", "newUUID", "randomString", "randAlpha", "randNumeric")

LINES = [
    f"--insecure {CALL} {JOE} ADDR",
    f"--insecure --call helloworld.Greeter.SayHello {JOE} ADDR",  # reflection
    f"""--insecure {CALL} {JOE} -m '{{"trace_id":"{{{{.RequestNumber}}}}", "timestamp":"{{{{.TimestampUnix}}}}"}}' ADDR""",
    f"""--insecure {CALL} -d '[{{"name":"Joe"}},{{"name":"Bob"}}]' -n 100 -c 10 ADDR""",
    f"{CALL} {JOE} -n 400 -c 20 ADDR",
    f"{CALL} {JOE} -n 400 -c 20 --connections=10 ADDR",
    """--protoset ./bundle.protoset --call helloworld.Greeter.SayHello -d '{"name":"Bob"}' -n 300 -c 10 ADDR""",
    """--insecure --async --proto /protos/helloworld.proto --call helloworld.Greeter/SayHello -c 10 -n 200 --rps 200 -d '{"name":"{{.WorkerID}}"}' ADDR""",
    f"--insecure --proto helloworld.proto -i /protos --call helloworld.Greeter.SayHello {JOE} -c 5 -n 50 ADDR",
    f"""--insecure {CALL} {JOE} --skipFirst 10 --name 'Greeter SayHello' --tags '{{"env":"staging"}}' ADDR""",
    f"""--insecure --proto ./protos/greeter.proto --call helloworld.Greeter.SayHello {JOE} -c 5 -n 50 -m '{{"request-id":"{{{{.RequestNumber}}}}"}}' --debug ./logs/debug.json ADDR""",
    f"{CALL} -B ./hello_request_data.bin -n 100 ADDR",
    f"{CALL} {JOE} -e -n 100 ADDR",
    f"""{CALL} -d '{{"name":"{{{{.RequestNumber}}}}"}}' -n 120 -c 4 ADDR""",
    f"""{CALL} -d '{{"name":"{{{{.FullyQualifiedName}}}} {{{{.MethodName}}}} {{{{.ServiceName}}}} {{{{.InputName}}}} {{{{.OutputName}}}}"}}' -n 20 -c 2 ADDR""",
    f"""{CALL} -d '{{"name":"{{{{.IsClientStreaming}}}} {{{{.IsServerStreaming}}}}"}}' -n 20 -c 2 ADDR""",
    f"""{CALL} -d '{{"name":"{{{{randomString 8}}}}"}}' -n 30 -c 3 ADDR""",
    f"""{CALL} -d '{{"name":"{{{{newUUID}}}}"}}' -n 30 -c 3 ADDR""",
    f"""{CALL} -d '{{"name":"{{{{.RequestNumber}}}}"}}' --disable-template-data -n 20 -c 2 ADDR""",
    f"""{CALL} -d '{{"name":"{{{{.WorkerID}}}}"}}' --disable-template-functions -n 40 -c 4 ADDR""",
    f"{CALL} -D ./data.json -n 60 -c 3 ADDR",
    f"{CALL} {JOE} -M ./metadata.json -n 60 -c 3 ADDR",
    f"""{CALL} {JOE} -m '{{"foo":"bar","trace":"{{{{.WorkerID}}}}-{{{{.RequestNumber}}}}"}}' -n 60 -c 3 ADDR""",
    f"{CALL} {JOE} --cpus 1 -c 10 -n 100 ADDR",
    f"{CALL} {JOE} --connections 5 -c 10 -n 100 ADDR",
    f"{CALL} {JOE} --rps 100 -n 100 -c 5 ADDR",
    f"{CALL} {JOE} --count-errors -n 50 -c 5 ADDR",
    f"{CALL} {JOE} -n 80 -c 8 --connect-timeout 5s -t 10s --keepalive 30s ADDR",
    f"{CALL} {JOE} -n 40 -c 4 -O json ADDR",
    f"{CALL} {JOE} -c 5 -z 1s ADDR",
    f"{CALL} {JOE} -c 5 -z 1s -x 2s ADDR",
]


def _shape(text: str) -> str:
    """Letters, digits and hex runs as classes: two renderings of one template compare."""
    return re.sub(r"[0-9A-Za-z]+", lambda m: f"<{len(m.group())}>", text)


WORKER = re.compile(r"g\d+c\d+")


def _seen(calls: list[SeenCall], varying: bool) -> dict[str, object]:
    """What the server saw. Which worker made which call is up to scheduling, in ghz
    and here: worker ids are compared as a set, the rest with them blanked."""

    def shape(text: str) -> str:
        text = WORKER.sub("<worker>", text)
        return _shape(text) if varying else text

    texts = [c.name for c in calls] + [v for c in calls for v in c.metadata.values()]
    return {
        "workers": set(WORKER.findall(" ".join(texts))),
        "names": Counter(shape(call.name) for call in calls),
        "metadata": Counter(
            json.dumps({k: shape(v) for k, v in sorted(call.metadata.items())}) for call in calls
        ),
        "connections": len({call.peer for call in calls}),
    }


def _not_from(calls: list[SeenCall], ghz_calls: list[SeenCall]) -> list[SeenCall]:
    """The calls not made on ghz's connections: with -z, ghz leaves at its time limit,
    and a call of its own that the server's thread pool ran late (a loaded machine)
    was logged among grpcbench's."""
    theirs = {call.peer for call in ghz_calls}
    return [call for call in calls if call.peer not in theirs]


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize("line", LINES)
def test_the_server_sees_what_ghz_sends(line: str, tmp_path: Path) -> None:
    ghz = ghz_binary()
    work = _workdir(tmp_path)
    (work / "data.json").write_text('[{"name":"Ann"},{"name":"Ben"},{"name":"Cy"}]')
    (work / "metadata.json").write_text('{"tenant":"t1","trace":"{{.RequestNumber}}"}')
    (work / "logs").mkdir()  # ghz's --debug needs its directory (grpcbench makes it)
    with logging_greeter() as (address, log):
        words = shlex.split(
            line.replace("ADDR", address).replace(" /protos", f" {work / 'protos'}")
        )
        # The server speaks plaintext: a line without --insecure gets it, for both (ghz's
        # default is TLS, and grpcbench's on a ghz line; tests/conformance runs them so).
        words = words if "--insecure" in words else ["--insecure", *words]
        theirs = _run([ghz, *words], work)
        if "--proto" not in words and "--protoset" not in words:
            # ghz asks reflection for the method's symbol, which grpcio's reflection
            # service does not resolve; grpcbench asks for the service's.
            assert theirs.returncode == 1 and "Symbol not found" in theirs.stderr
            ours = _run([*GRPCBENCH, "run", *words], work)
            assert ours.returncode == 0 and len(log.take()) == 200, ours.stderr
            return
        assert theirs.returncode == 0, theirs.stderr
        ghz_calls = log.take()
        ours = _run([*GRPCBENCH, "run", *words], work)
        assert ours.returncode == 0, ours.stderr
        load = _not_from(log.take(), ghz_calls)
    timed = " -z " in line
    varying = any(name in line for name in VARYING)
    mine, its = _seen(load, varying), _seen(ghz_calls, varying)
    if timed:  # the counts depend on the speed of each client: what was sent must agree
        assert len(load) > 0 and len(ghz_calls) > 0
        assert set(mine["names"]) == set(its["names"])  # type: ignore[call-overload]
        assert mine["connections"] == its["connections"]
        return
    assert mine == its
    if "-O json" in line:  # the report on standard output, as ghz prints it
        assert json.loads(ours.stdout)["count"] == json.loads(theirs.stdout)["count"]
