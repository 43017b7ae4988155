"""The pieces of --call: ghz's templates, requests per kind, names, secrets, scenario tables."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from grpcbench.base.errors import UsageError
from grpcbench.base.secrets import MASK, redact_argv
from grpcbench.model.scenario import load_scenario
from grpcbench.rpc.call import CallMessages, MethodCall
from grpcbench.rpc.metadata_text import read_metadata
from grpcbench.rpc.schema import MethodSchema, compile_proto, parse_call_name
from grpcbench.rpc.templates import Template
from tests.support.echo_server import EXAMPLE

PROTO = str(EXAMPLE / "echo.proto")


@pytest.fixture(scope="module")
def descriptor_set() -> bytes:
    return compile_proto(PROTO)


def call(
    descriptor_set: bytes, method: str, data: str, metadata: str = "{}", n: int = 0
) -> MethodCall:
    return MethodCall.build(MethodSchema(method, descriptor_set), data, metadata, n)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("echo.Echo/Say", "echo.Echo/Say"),
        ("echo.Echo.Say", "echo.Echo/Say"),
        ("/echo.Echo/Say", "echo.Echo/Say"),
        ("a.b.c.Svc.M", "a.b.c.Svc/M"),
    ],
)
def test_call_names_in_both_spellings(text: str, expected: str) -> None:
    assert parse_call_name(text) == expected


@pytest.mark.parametrize("text", ["Say", "echo.Echo/", "echo.Echo/Say/x", "a b.c"])
def test_bad_call_names(text: str) -> None:
    with pytest.raises(UsageError, match="bad --call"):
        parse_call_name(text)


def test_template_fields_and_functions() -> None:
    template = Template('{"n": {{.RequestNumber}}, "w": "{{ .WorkerID }}", "u": "{{newUUID}}",'
                        ' "s": "{{randomString 5}}", "i": {{randomInt 3 4}}}')  # fmt: skip
    value = json.loads(template.render({"RequestNumber": "7", "WorkerID": "0.1"}))
    assert value["n"] == 7 and value["w"] == "0.1" and value["i"] == 3
    assert len(value["u"]) == 36 and len(value["s"]) == 5
    assert Template('{"plain": 1}').fixed


def test_unsupported_template_actions_name_what_is_supported() -> None:
    with pytest.raises(UsageError, match=r"unsupported template action.*\.RequestNumber"):
        Template("{{ sprig_only 3 }}")
    with pytest.raises(UsageError, match="MAX must exceed MIN"):
        Template("{{randomInt 5 5}}")


def test_request_numbers_are_unique_across_generator_processes(descriptor_set: bytes) -> None:
    method = call(descriptor_set, "echo.Echo/Say", '{"message": "{{.RequestNumber}}"}')
    seen = []
    for index in range(3):
        messages = CallMessages(method, index, 3)
        for _ in range(4):
            [request], _metadata = messages.next("w")
            seen.append(method.schema.request_class.FromString(request).message)
    assert sorted(seen, key=int) == [str(n) for n in range(12)]


def test_a_list_is_cycled_for_unary_and_is_the_stream_for_client_streams(
    descriptor_set: bytes,
) -> None:
    data = '[{"message": "a"}, {"message": "b"}, {"message": "c"}]'
    unary = CallMessages(call(descriptor_set, "echo.Echo/Say", data))
    request_class = unary.schema.request_class
    sent = [request_class.FromString(unary.next("w")[0][0]).message for _ in range(4)]
    assert sent == ["a", "b", "c", "a"]
    stream = CallMessages(call(descriptor_set, "echo.Echo/Collect", data))
    assert len(stream.next("w")[0]) == 3
    counted = CallMessages(call(descriptor_set, "echo.Echo/Chat", data, n=5))
    for _ in range(3):  # every stream from the list's top, as ghz's --stream-call-count
        assert [request_class.FromString(m).message for m in counted.next("w")[0]] == list("abcab")
    two = CallMessages(call(descriptor_set, "echo.Echo/Collect", data, n=2))
    assert [[request_class.FromString(m).message for m in two.next("w")[0]] for _ in range(3)] == [
        ["a", "b"]
    ] * 3
    served = CallMessages(call(descriptor_set, "echo.Echo/Expand", data))
    assert [request_class.FromString(served.next("w")[0][0]).message for _ in range(4)] == list(
        "abca"
    )


def test_a_server_stream_s_list_is_cycled_on_the_callback_loops_too(descriptor_set: bytes) -> None:
    """A fixed list on a server stream is cycled per call: no plan sends its first
    element on every call (the callback loops' stream plan took fixed[0])."""
    from grpcbench.rpc.workload import MethodWorkload

    data = '[{"message": "a"}, {"message": "b"}]'
    listed = MethodWorkload(call(descriptor_set, "echo.Echo/Expand", data))
    assert listed.unary_plan() is None
    single = MethodWorkload(call(descriptor_set, "echo.Echo/Expand", '{"message": "a"}'))
    plan = single.unary_plan()
    assert plan is not None and len(plan.requests) == 1


def test_templated_metadata_per_call(descriptor_set: bytes) -> None:
    method = call(descriptor_set, "echo.Echo/Say", "{}", '{"x-request": "{{.RequestNumber}}"}')
    messages = CallMessages(method)
    assert messages.next("w")[1] == (("x-request", "0"),)
    assert messages.next("w")[1] == (("x-request", "1"),)


def test_metadata_options_merge_and_never_echo_values(tmp_path: Path) -> None:
    file = tmp_path / "m.json"
    file.write_text('{"authorization": "Bearer from-file", "x-a": "1"}')
    merged = json.loads(read_metadata(("authorization=Bearer cli", '{"x-b": "2"}'), str(file)))
    assert merged == {"authorization": "Bearer cli", "x-a": "1", "x-b": "2"}
    with pytest.raises(UsageError) as caught:
        read_metadata(("no-equals-sign-secret",), None)
    assert "secret" not in str(caught.value)


def test_saved_command_lines_mask_metadata_and_secret_params() -> None:
    argv = [
        "grpcbench", "run", "-m", "authorization=Bearer T1", "--metadata={\"k\": \"T2\"}",
        "-mauthorization=T3", "--server-param", "token=T4", "--server-param=delay_ms=5",
        "--mongo-uri", "mongodb://u:T5@h/db",
    ]  # fmt: skip
    shown = " ".join(redact_argv(argv, {"token"}))
    for secret in ("T1", "T2", "T3", "T4", "T5"):
        assert secret not in shown
    assert f"authorization={MASK}" in shown and "delay_ms=5" in shown


def test_every_option_declared_secret_is_masked_on_the_saved_command_line() -> None:
    """The secret options come from their declarations (run.arguments), so an option
    declared secret cannot be forgotten here: --reflect-metadata, --key and URIs whose
    password holds "/" or "@" included, in every spelling."""
    from grpcbench.run.arguments import secret_options

    assert {"--reflect-metadata", "--key", "--database", "-m"} <= secret_options()
    argv = [
        "grpcbench", "run", "--reflect-metadata", '{"authorization": "R1"}', "--key=R2.pem",
        "--database", "postgresql://bench:TOP/R3@host/db", "--mongo-uri=mongodb://u:R4@x@h/",
        "-mauthorization=R5", "-d", '{"name": "kept"}',
    ]  # fmt: skip
    shown = " ".join(redact_argv(argv, (), secret_options()))
    for secret in ("R1", "R2", "R3", "R4", "R5"):
        assert secret not in shown
    assert "postgresql://bench:***@host/db" in shown and '{"name": "kept"}' in shown


def test_redaction_reads_a_long_text_once() -> None:
    """A 10 MB request of letters (a regex anchored on a scheme was quadratic in it: 32 KB
    took 2.4 s) is redacted in one pass; a password is found anywhere in it."""
    import time

    from grpcbench.base.secrets import redact

    letters = "a" * 10_000_000
    started = time.process_time()
    shown = redact(f"{letters} mongodb://u:R6@h/ {letters}://x")
    assert "R6" not in shown and len(shown) == 2 * len(letters) + len(" mongodb://u:***@h/ ://x")
    assert time.process_time() - started < 20  # linear: ~0.1 s; quadratic: hours


def test_a_scenario_names_the_call_and_tls_relative_to_its_file(tmp_path: Path) -> None:
    (tmp_path / "api.toml").write_text(
        'name = "api"\n'
        "[call]\n"
        'method = "echo.Echo/Say"\n'
        'proto = "protos/echo.proto"\n'
        'data = { message = "hi" }\n'
        'metadata = { authorization = "Bearer x" }\n'
        "[tls]\n"
        'cacert = "ca.pem"\n'
        'cname = "api.test"\n'
    )
    scenario = load_scenario(str(tmp_path / "api.toml"))
    assert scenario.service == "" and scenario.call.method == "echo.Echo/Say"
    assert scenario.call.proto == str(tmp_path / "protos/echo.proto")
    assert json.loads(scenario.call.data or "") == {"message": "hi"}
    assert scenario.call.security.cacert == str(tmp_path / "ca.pem")
    assert scenario.call.security.tls


def test_unknown_keys_of_the_call_tables_are_errors(tmp_path: Path) -> None:
    (tmp_path / "bad.toml").write_text('name = "bad"\n[call]\nmethod = "a.B/C"\ntotal = 3\n')
    with pytest.raises(UsageError, match="unknown key 'total' in \\[call\\]"):
        load_scenario(str(tmp_path / "bad.toml"))


@pytest.mark.parametrize(
    ("text", "rendered"),
    [
        ("{{ upper `joe` }}", "JOE"),
        ("{{ .WorkerID | upper | repeat 2 }}", "G0C0G0C0"),
        ("{{ add 1 (mul 2 3) }}", "7"),
        ("{{ .RequestNumber | add 100 }}", "107"),
        ("{{ div -7 2 }} {{ mod -7 3 }}", "-3 -1"),  # Go truncates toward zero
        ('{{ "a\\tb" }}', "a\tb"),
        ("{{ contains `ell` `hello` }}", "true"),
        ("{{ print 1 2 `x` 3 }}", "1 2x3"),
        ("{{/* a comment */}}x", "x"),
    ],
)
def test_go_actions_render_as_go_s_text_template(text: str, rendered: str) -> None:
    assert Template(text).render({"WorkerID": "g0c0", "RequestNumber": "7"}) == rendered


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("{{ nope 1 }}", 'function "nope" not defined'),
        ("{{ .Nope }}", r"unsupported template action.*\.RequestNumber"),
        ("{{ if .WorkerID }}x{{ end }}", "control actions are not supported"),
        ("{{ $x := 1 }}", "variables are not supported"),
        ("{{ add 1 (mul 2 3 }}", "unclosed"),
        ("{{ upper `a` `b` }}", "wrong number of arguments for upper"),
        ("{{ 1 2 }}", "only a function takes arguments"),
        ("{{ div 1 0 }}", "integer divide by zero"),
    ],
)
def test_go_actions_that_go_refuses_are_refused_before_the_run(text: str, error: str) -> None:
    with pytest.raises(UsageError, match=error):
        Template(text)
