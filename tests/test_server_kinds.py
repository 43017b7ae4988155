"""A new server kind is one module plus one entry, and services key servicers by kind."""

from __future__ import annotations

import importlib
from typing import Any

import pytest

from grpcbench.base.errors import UsageError
from grpcbench.servers import kinds
from grpcbench.servers.spec import parse_server_spec
from grpcbench.services.base import ServiceDefinition
from grpcbench.services.hello import SERVICE as HELLO


def test_the_shorthand_fields_fold_into_servicers() -> None:
    assert set(HELLO.servicers) == {"grpcio", "grpcio-aio", "grpclib"}
    assert HELLO.servicers["grpclib"] is HELLO.grpclib_handlers
    assert HELLO.kinds_served() == ("grpcio", "grpcio-aio", "grpclib")


def test_a_shorthand_that_is_set_wins_so_replace_changes_it() -> None:
    from dataclasses import replace

    def mine(server: Any, params: Any) -> None: ...
    def shorthand(server: Any, params: Any) -> None: ...

    service = ServiceDefinition("x", servicers={"grpcio": mine}, register_grpcio=shorthand)
    assert service.servicer("grpcio") is shorthand
    assert replace(HELLO, register_grpcio=mine).servicer("grpcio") is mine
    with pytest.raises(SystemExit, match="no servicer for server kind grpclib"):
        service.servicer("grpclib")


def test_a_fake_kind_is_one_module_plus_one_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    from grpcbench.run.arguments import RunArgs
    from grpcbench.run.options import build_run_options

    monkeypatch.setitem(
        kinds.KINDS,
        "fake",
        kinds.ServerKindInfo(
            name="fake", description="the tests' own", module="tests.support.fake_kind",
            supports_uvloop=False,
        ),
    )  # fmt: skip
    spec = parse_server_spec("fake")
    service = ServiceDefinition(
        "fakes", servicers={"fake": lambda params: ("served", dict(params))},
        workload=HELLO.workload,
    )  # fmt: skip
    assert service.kinds_served() == ("fake",)
    module = importlib.import_module(spec.info.module)
    module.serve(service, spec, {"a": 1}, "127.0.0.1", 0)
    assert module.SERVED[-1] == ("fake", ("served", {"a": 1}))

    # The run's checks know the new kind too: served, and refused where it is not.
    import grpcbench.run.scenario_choice as scenario_choice

    monkeypatch.setattr(scenario_choice, "load_service", lambda name: service)
    build_run_options(RunArgs(servers=("fake",), service="fakes"))
    with pytest.raises(UsageError, match=r"no servicer for server kind grpclib \(servicers"):
        build_run_options(RunArgs(servers=("grpclib",), service="fakes"))
