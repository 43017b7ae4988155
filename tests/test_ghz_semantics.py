"""ghz's command-line semantics as its binary has them, checked without a server:
Go durations, -t 0, -x, --skipFirst, --connections, --rate-schedule on a ghz line, -z
past the default level limit."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from grpcbench.base.errors import UsageError
from grpcbench.base.parsing import parse_duration
from grpcbench.rpc.settings import CallArgs
from grpcbench.run.arguments import RunArgs
from grpcbench.run.ghz_compat import apply
from grpcbench.run.ghz_flags import GhzFlags
from grpcbench.run.options import RunOptions, build_run_options

PROTO = "protos/grpcbench/proto/helloworld.proto"


def ghz_line(settings: dict[str, str] | None = None, **given: object) -> RunOptions:
    """A ghz command line: a method, a proto and a target, nothing of a scenario."""
    flags = {name: given.pop(name) for name in list(given) if hasattr(GhzFlags(), name)}
    args = RunArgs(
        address="127.0.0.1:50051", settings=settings or {},
        call=CallArgs(call=("helloworld.Greeter/SayHello",), proto=PROTO),
        ghz_flags=GhzFlags(**flags),  # type: ignore[arg-type]
    )  # fmt: skip
    return build_run_options(apply(replace(args, **given)))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("200us", 200e-6), ("1m30s", 90.0), ("1h", 3600.0), ("1.5h", 5400.0), ("2min", 120.0),
     ("500ms", 0.5), ("10", 10.0), ("1h2m3.5s", 3723.5), ("300ns", 300e-9)],
)  # fmt: skip
def test_go_durations_as_ghz_takes_them(text: str, seconds: float) -> None:
    assert parse_duration(text, "-t") == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["1m30", "-1s", "1x", "", "0s"])
def test_what_is_not_a_duration_is_refused(text: str) -> None:
    with pytest.raises(UsageError, match="bad -t"):
        parse_duration(text, "-t")


def test_timeout_zero_is_ghz_no_timeout_the_levels_limit() -> None:
    options = ghz_line({"timeout": "0"})
    assert options.settings.timeout_s == options.settings.max_level_s == 300.0
    assert ghz_line({"timeout": "200us"}).settings.timeout_s == pytest.approx(200e-6)


def test_x_is_the_runs_duration_and_n_is_ignored() -> None:
    """ghz's binary (main.go: cfg.Z = cfg.X), not its docs: -x 10s -n 2000 runs 10 s."""
    options = ghz_line({"requests": "2000"}, max_duration="10s")
    assert (options.settings.duration_s, options.settings.requests) == (10.0, 0)
    assert ghz_line({"duration": "1s"}, max_duration="30s").settings.duration_s == 30.0


def test_skip_first_counts_within_n() -> None:
    """-n 300 --skipFirst 100: 300 calls made, 200 reported; ghz's default -n 200 too."""
    options = ghz_line({"requests": "300"}, skip_first=100)
    assert (options.settings.warmup_requests, options.settings.requests) == (100, 200)
    assert ghz_line(skip_first=10).settings.requests == 190
    with pytest.raises(UsageError, match="skips every one of the 300 calls"):
        ghz_line({"requests": "300"}, skip_first=300)


def test_more_connections_than_concurrency_is_refused_as_ghz_does() -> None:
    with pytest.raises(UsageError, match="cannot be greater than concurrency"):
        ghz_line({"connections": "20"}, concurrency="10")
    assert ghz_line({"connections": "5"}, concurrency="10").settings.connections.size == 5


def test_a_rate_schedule_on_a_ghz_line_gets_no_ghz_count_or_concurrency() -> None:
    """ghz's defaults (-n 200, -c 50) were injected and the schedule then refused them."""
    options = ghz_line({"rate_schedule": "step:start=10,step=10,every=1s,end=30"})
    assert (options.settings.duration_s, options.settings.requests) == (3.0, 0)


def test_a_duration_past_the_default_level_limit_runs_it() -> None:
    """-z 6m ran 300 s and said nothing: the level's limit rises to a given duration, or,
    given shorter, the line is refused."""
    options = ghz_line({"duration": "6m"}, rps="5")
    assert (options.settings.duration_s, options.settings.max_level_s) == (360.0, 360.0)
    with pytest.raises(UsageError, match="longer than --max-level"):
        ghz_line({"duration": "6m", "max_level": "5m"}, rps="5")


def test_template_values_are_ghzs() -> None:
    """Short service and message names, RFC 3339 to the second with Z, Sprig's random
    functions; --disable-template-data sends actions as they are, and
    --disable-template-functions refuses a function (ghz: function not defined)."""
    import re

    from grpcbench.rpc.templates import MethodNames, Template, call_fields

    names = MethodNames(
        "helloworld.Greeter/SayHello", "helloworld.HelloRequest", "helloworld.HelloReply",
        False, False,
    )  # fmt: skip
    fields = call_fields(names, "g0c0", 7)
    assert (fields["ServiceName"], fields["InputName"], fields["OutputName"]) == (
        "Greeter", "HelloRequest", "HelloReply",
    )  # fmt: skip
    assert fields["FullyQualifiedName"] == "helloworld.Greeter.SayHello"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", fields["Timestamp"])
    rendered = Template('{"a":"{{randAlphaNum 8}}","b":"{{randNumeric 4}}"}').render(fields)
    assert re.fullmatch(r'\{"a":"[A-Za-z0-9]{8}","b":"[0-9]{4}"\}', rendered)
    literal = '{"name":"{{.RequestNumber}} {{newUUID}}"}'
    assert Template(literal, "off").render(fields) == literal
    assert Template('{"n":"{{.RequestNumber}}"}', "no-functions").render(fields) == '{"n":"7"}'
    with pytest.raises(UsageError, match="function 'newUUID' not defined"):
        Template(literal, "no-functions")


def test_the_disable_template_flags_reach_the_call() -> None:
    options = ghz_line(disable_template_data=True)
    assert options.call is not None and options.call.templates == "off"
    functions_off = ghz_line(disable_template_functions=True).call
    assert functions_off is not None and functions_off.templates == "no-functions"
    call = CallArgs(
        call=("helloworld.Greeter/SayHello",), proto=PROTO, data='{"name":"{{newUUID}}"}'
    )
    flags = GhzFlags(disable_template_functions=True)
    with pytest.raises(UsageError, match="not defined"):
        build_run_options(apply(RunArgs(address="127.0.0.1:50051", call=call, ghz_flags=flags)))


def test_ghz_defaults_are_taken() -> None:
    from grpcbench.cli.argv import ghz_flags_of

    line = ["grpcbench", "run", "--load-schedule=const", "--concurrency-schedule", "const",
            "--duration-stop", "wait", "-c", "5", "HOST:1"]  # fmt: skip
    # --load-schedule, --concurrency-schedule and --duration-stop are run's own options.
    assert ghz_flags_of(line) == line
    assert ghz_flags_of(["grpcbench", "run", "--", "--lb-strategy=x"])[-1] == "--lb-strategy=x"


def test_a_ghz_line_without_its_host_is_refused_as_ghz_refuses_it() -> None:
    """--proto and --call with no address ran the bundled servers for minutes; ghz
    says "host required". Starting servers on purpose (--servers, --service) stays."""
    from grpcbench.rpc.settings import CallArgs
    from grpcbench.run.ghz_compat import apply

    call = CallArgs(call=("helloworld.Greeter.SayHello",), proto="helloworld.proto")
    with pytest.raises(UsageError, match="host required"):
        apply(RunArgs(call=call))
    assert apply(RunArgs(call=call, servers=("grpclib",))).servers == ("grpclib",)
    assert apply(RunArgs(call=call, address="127.0.0.1:1")).address == "127.0.0.1:1"


def test_ghz_s_short_help_and_version_after_run() -> None:
    from grpcbench.cli.version_flag import version_spelled

    assert version_spelled(["g", "run", "-c", "2", "-v"]) == ["g", "--version"]
    assert version_spelled(["g", "run", "--", "-v"]) == ["g", "run", "--", "-v"]
    assert version_spelled(["g", "show", "-v"]) == ["g", "show", "-v"]
    from typer.testing import CliRunner

    from grpcbench.cli.app import app

    shown = CliRunner().invoke(app, ["run", "-h"])
    assert shown.exit_code == 0 and "Usage:" in shown.output


@pytest.mark.parametrize("command", ["list", "describe"])
def test_grpcurl_s_flags_are_taken_or_refused_by_name(command: str) -> None:
    from grpcbench.cli.argv import GRPCURL_REFUSED, GRPCURL_TAKEN, grpcurl_flags_of

    assert grpcurl_flags_of(["g", command, "-plaintext", "-proto=a.proto", "H:1"]) == [
        "g", command, "--insecure", "--proto", "a.proto", "H:1",
    ]  # fmt: skip
    assert grpcurl_flags_of(["g", command, "-insecure", "H:1"]) == [
        "g",
        command,
        "--skipTLS",
        "H:1",
    ]
    for flag in GRPCURL_TAKEN:
        assert flag not in grpcurl_flags_of(["g", command, flag, "x"])
    for flag in GRPCURL_REFUSED:
        with pytest.raises(UsageError, match=f"grpcurl's {flag} is not taken: "):
            grpcurl_flags_of(["g", command, flag, "x", "H:1"])
    assert grpcurl_flags_of(["g", "run", "-plaintext"]) == ["g", "run", "-plaintext"]


def test_ghz_load_schedules_become_ghz_s_pacer_and_its_checks_are_ghz_s() -> None:
    """--load-schedule step|line is ghz's StepPacer (--rate-schedule ghz:...); -n still
    ends the level, -c caps calls in flight; what ghz refuses is refused."""
    call = CallArgs(call=("helloworld.Greeter.SayHello",))

    def applied(**flags: str) -> RunArgs:
        return apply(RunArgs(address="127.0.0.1:1", call=call, concurrency="10",
                             ghz_flags=GhzFlags(**flags)))  # type: ignore[arg-type]  # fmt: skip

    args = applied(load_schedule="step", load_start="50", load_end="150", load_step="10",
                   load_step_duration="5s")  # fmt: skip
    assert args.settings["rate_schedule"] == "ghz:start=50,step=10,every=5s,end=150"
    assert args.settings["requests"] == "200" and args.settings["max_in_flight"] == "10"
    line = applied(load_schedule="line", load_start="5", load_step="5")
    assert str(line.settings["rate_schedule"]).startswith("ghz:start=5,step=5,every=1s,horizon=")
    for flags, error in (
        ({"load_start": "5"}, "go with --load-schedule step or line"),
        ({"load_schedule": "step", "load_start": "5", "load_step": "5"}, "--load-step-duration"),
        ({"load_schedule": "line", "load_start": "5", "load_end": "5", "load_step": "1"},
         "cannot equal"),
        ({"load_schedule": "line", "load_start": "5", "load_step": "0"}, "invalid --load-step"),
        ({"load_schedule": "line", "load_start": "5", "load_step": "1", "rps": "9"}, "give one"),
        ({"load_schedule": "wave"}, '"const", "step" or "line"'),
    ):  # fmt: skip
        with pytest.raises(UsageError, match=error):
            applied(**flags)


def test_a_ghz_line_speaks_tls_with_the_system_s_cas_unless_insecure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ghz's default is TLS: a line with the host last gets it (the CAs ghz trusts:
    $SSL_CERT_FILE first); --insecure and --target stay plaintext."""
    from grpcbench.rpc.security import system_roots_pem

    bundle = tmp_path / "ca.pem"
    bundle.write_text("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    assert system_roots_pem() == bundle.read_text()
    call = CallArgs(call=("helloworld.Greeter.SayHello",))
    ghz_line = apply(RunArgs(address="127.0.0.1:1", call=call)).call.security
    assert ghz_line.system_roots and ghz_line.tls and "system's trusted CAs" in ghz_line.describe()
    assert ghz_line.resolve("127.0.0.1:1").root_pem == bundle.read_text()
    for args in (RunArgs(address="127.0.0.1:1", call=call, insecure=True),
                 RunArgs(target="127.0.0.1:1", call=call)):  # fmt: skip
        assert not apply(args).call.security.tls


def test_two_options_of_a_kind_on_a_ghz_line_are_ghz_s_choice(tmp_path: Path) -> None:
    """ghz runs -d with -D (-D wins), --proto with --protoset (--proto), -b with -d
    (binary) and -z with -n (-z); grpcbench's own lines still refuse each pair."""
    data = tmp_path / "d.json"
    data.write_text('{"name":"file"}')
    both = CallArgs(call=("helloworld.Greeter/SayHello",), proto=PROTO, protoset="x.protoset",
                    data='{"name":"x"}', data_file=str(data))  # fmt: skip
    args = apply(RunArgs(address="127.0.0.1:1", call=both, settings={"requests": "10",
                                                                    "duration": "1s"}))  # fmt: skip
    assert (args.call.protoset, args.call.data, args.call.data_file) == (None, None, str(data))
    assert "requests" not in args.settings and args.settings["duration"] == "1s"
    stdin = apply(RunArgs(address="127.0.0.1:1", call=replace(both, data="@"))).call
    assert (stdin.data, stdin.data_file) == ("@", None)
    binary = apply(RunArgs(address="127.0.0.1:1", call=replace(both, binary_stdin=True))).call
    assert (binary.data, binary.data_file) == (None, None)
    with pytest.raises(UsageError, match="not both"):  # not a ghz line: grpcbench's own
        build_run_options(apply(RunArgs(target="127.0.0.1:1", call=both)))


def test_a_ghz_yaml_config_is_read_as_ghz_reads_it(tmp_path: Path) -> None:
    config = tmp_path / "ghz.yaml"
    config.write_text("call: helloworld.Greeter.SayHello\ntotal: 7\nconcurrency: 3\n"
                      "insecure: true\nhost: 127.0.0.1:1\ndata:\n  name: Joe\n")  # fmt: skip
    args = apply(RunArgs(ghz_flags=GhzFlags(config=str(config))))
    assert (args.address, args.settings["requests"], args.concurrency) == ("127.0.0.1:1", "7", "3")
    assert args.call.data == '{"name": "Joe"}' and args.insecure
    config.write_text("call: [\n")
    with pytest.raises(UsageError, match="not valid YAML at line 2"):
        apply(RunArgs(ghz_flags=GhzFlags(config=str(config))))


def test_dynamic_stream_messages_are_rendered_as_each_is_sent() -> None:
    """--stream-dynamic-messages: message i of a call is rendered when the stream takes
    it (the call's worker and number, a new UUID); refused with static data and -b."""
    from grpcbench.rpc.call import CallMessages
    from grpcbench.rpc.planned import plan_call
    from grpcbench.rpc.settings import CallSettings

    greeter = "tests/conformance/ghz_testdata/greeter.proto"
    settings = CallSettings(
        method="helloworld.Greeter/SayHelloCS", proto=greeter, stream_messages=3,
        data='[{"name":"{{.RequestNumber}}-{{.UUID}}"}]', stream_dynamic=True,
    )  # fmt: skip
    planned = plan_call(settings)
    assert planned is not None
    call = planned.checked(planned.descriptor_set or b"")
    messages, _ = CallMessages(call).next("g0c0")
    sent = [bytes(message) for message in messages]
    assert len(sent) == 3 and len(set(sent)) == 3 and all(b"0-" in m for m in sent)
    still, _ = CallMessages(replace(call, dynamic=False)).next("g0c0")
    assert len(set(still)) == 1
    with pytest.raises(UsageError, match="no template action"):
        plan_call(replace(settings, data='[{"name":"Joe"}]'))
    with pytest.raises(UsageError, match="binary"):
        plan_call(replace(settings, data=None, binary=b"\n\x03Joe"))
    with pytest.raises(UsageError, match="only client and bidi"):
        plan_call(replace(settings, method="helloworld.Greeter/SayHello", stream_messages=None))


def test_grpc_names_and_the_balancing_policy_as_ghz_takes_them() -> None:
    """dns:///, dns://RESOLVER/ and passthrough:/// name HOST:PORT; --lb-strategy is
    grpc's pick_first or round_robin, the same for one address."""
    from grpcbench.targets.choice import plain_address, target_address

    assert plain_address("dns:///example.test:443") == "example.test:443"
    assert plain_address("dns://8.8.8.8/example.test:443") == "example.test:443"
    assert target_address(None, "passthrough:///127.0.0.1:1") == "127.0.0.1:1"
    assert plain_address("127.0.0.1:1") == "127.0.0.1:1"
    call = CallArgs(call=("helloworld.Greeter.SayHello",))
    for strategy, target in (("round_robin", "dns:///127.0.0.1:1"), ("pick_first", "h:1")):
        apply(RunArgs(address=target, call=call, ghz_flags=GhzFlags(lb_strategy=strategy)))
    with pytest.raises(UsageError, match="pick_first or round_robin"):
        apply(RunArgs(address="h:1", call=call, ghz_flags=GhzFlags(lb_strategy="grpclb")))


def test_binary_requests_are_read_as_ghz_reads_them() -> None:
    """-B/-b: varint-length-delimited messages if the bytes parse so (cut short: what was
    read), else one message; neither is one line naming both."""
    from grpcbench.rpc.planned import _binary_as_json
    from grpcbench.rpc.schema import MethodSchema, compile_proto

    schema = MethodSchema("helloworld.Greeter/SayHello", compile_proto(PROTO))
    assert json.loads(_binary_as_json(schema, b"\n\x03Joe")) == {"name": "Joe"}
    two = b"\x05\n\x03Joe\x05\n\x03Ann"
    assert json.loads(_binary_as_json(schema, two)) == [{"name": "Joe"}, {"name": "Ann"}]
    assert json.loads(_binary_as_json(schema, two + b"\x09\n")) == [{"name": "Joe"},
                                                                     {"name": "Ann"}]  # fmt: skip
    with pytest.raises(UsageError, match="neither a serialized helloworld.HelloRequest nor"):
        _binary_as_json(schema, b"\xff\xff\xff")
