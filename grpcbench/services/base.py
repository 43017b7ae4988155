"""What a service plugin provides: servicers for every server kind and a client workload.

A service is the Python half of a scenario (the scenario file is the data half).
Keeping the grpcio, grpc.aio and grpclib servicers of one service in one module
lets a reader compare sync and async code of the same logic side by side (watch has
one module per framework: its grpclib servicer writes prepared frames itself).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grpcbench.contract.calls import (  # the plugin API names them too
    CallFunction,
    CallStats,
    Metadata,
    ReplyCounter,
    UnaryPlan,
    Workload,
    WorkloadError,
)
from grpcbench.services.params import Params

# The shorthand field of a bundled server kind's servicers.
SHORTHANDS = {
    "grpcio": "register_grpcio",
    "grpcio-aio": "register_aio",
    "grpclib": "grpclib_handlers",
}

__all__ = [
    "CallFunction",
    "CallStats",
    "Metadata",
    "ReplyCounter",
    "SHORTHANDS",
    "ServiceDefinition",
    "UnaryPlan",
    "Workload",
    "WorkloadError",
    "generated_routes",
]


@dataclass(frozen=True)
class ServiceDefinition:
    """A service plugin. Only ``name`` is required: a plugin provides what it has.

    Servicers are keyed by server kind in ``servicers`` (``"grpcio"``,
    ``"grpcio-aio"``, ``"grpclib"``, or any kind added to ``servers.kinds``): for
    the gRPC Python kinds a ``register(server, params)``, for grpclib a
    ``handlers(params) -> list``; each kind's module says what it calls. The
    fields ``register_grpcio``, ``register_aio`` and ``grpclib_handlers`` are
    shorthands for the three bundled kinds, folded into ``servicers``.

    A user's own servicers need only the kinds they exist for (asking another
    kind is one clear error), plus ``service_names`` for health and reflection;
    requests can then come from ``--call``/``--data`` instead of a ``workload``.
    """

    name: str
    description: str = ""
    # Fully-qualified gRPC service names, for the health and reflection services.
    service_names: tuple[str, ...] = ()
    # Server side: each receives the server and the scenario's server params.
    # Server side, keyed by server kind (see the class docstring).
    servicers: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    register_grpcio: Callable[[Any, Mapping[str, Any]], None] | None = None  # servicers["grpcio"]
    register_aio: Callable[[Any, Mapping[str, Any]], None] | None = None  # ["grpcio-aio"]
    grpclib_handlers: Callable[[Mapping[str, Any]], list[Any]] | None = None  # ["grpclib"]
    # Client side: build a workload from the scenario's workload params
    # (None: the requests come from --call).
    workload: Callable[[Mapping[str, Any]], Workload] | None = None
    # The .proto an external client (ghz) is given, relative to the protos/ directory.
    proto: str = ""
    # The call as one external client's call expresses it: the method
    # ("helloworld.Greeter.SayHello") and its request as JSON, for these
    # workload params; raises UsageError for a workload one call cannot express
    # (a paging loop). None: only --call runs on an external client.
    json_request: Callable[[Mapping[str, Any]], tuple[str, dict[str, Any]]] | None = None

    def __post_init__(self) -> None:
        servicers = dict(self.servicers)
        for kind, field_name in SHORTHANDS.items():
            shorthand = getattr(self, field_name)
            if shorthand is not None:  # set: it wins (``dataclasses.replace`` of one changes it)
                servicers[kind] = shorthand
        object.__setattr__(self, "servicers", servicers)

    def kinds_served(self) -> tuple[str, ...]:
        """The server kinds this service has servicers for."""
        return tuple(self.servicers)

    def servicer(self, kind: str) -> Callable[..., Any]:
        """What serves ``kind`` (a server child exits with this line without one)."""
        found = self.servicers.get(kind)
        if found is None:
            raise SystemExit(f"service {self.name} has no servicer for server kind {kind}")
        return found

    # Run once per run before any server starts (build a database in
    # ``workdir``, start backing services whose stop it registers on the exit
    # stack); returns the server params to use, so every server kind starts
    # from the same data.
    prepare: Callable[[Mapping[str, Any], Path, ExitStack], dict[str, Any]] | None = None
    # Server params completed from what is installed (which database runs), when
    # options are built: the header and the results then name what ran.
    complete_params: Callable[[Mapping[str, Any]], dict[str, Any]] | None = None
    # Run before each server kind starts, with the prepared params (e.g. empty
    # a collection), so each starts from the same state.
    reset: Callable[[Mapping[str, Any]], None] | None = None
    # Workload params derived from the prepared server params (e.g. how many
    # objects were seeded, so the client can check it got them all).
    workload_context: Callable[[Mapping[str, Any]], dict[str, Any]] | None = None
    # grpclib only: the codec for the whole server (e.g. one that passes
    # pre-serialized bytes through); None = grpclib's protobuf codec.
    grpclib_codec: Callable[[], Any] | None = None
    # Called before each level with (server params, workload params,
    # concurrency); raises UsageError when the level cannot run (e.g. memory).
    check_level: Callable[[Mapping[str, Any], Mapping[str, Any], int], None] | None = None
    # Called with (server kind, workload params): why a level cannot run on that
    # kind (e.g. a feature only grpclib has), or None. Such a level is reported
    # "not available on this kind" instead of run.
    unavailable: Callable[[str, Mapping[str, Any]], str | None] | None = None
    # The parameters the servicers and the workload read (name -> kind, limits,
    # help): scenario files and --server-param/--workload-param are checked
    # against them. None = not declared (anything passes, for older plugins).
    server_params: Params | None = None
    workload_params: Params | None = None


def generated_routes(module: str, base: str, servicer: object) -> dict[str, Any]:
    """A grpclib servicer's routes: its generated base's ``__mapping__``, bound to it.

    The bundled servicers do not subclass their generated bases, and each server kind's
    stubs are imported where it registers them, so a server child imports its own
    framework only: a grpcio child neither grpclib nor h2, a grpclib child not grpc
    (about 20 ms of each start). A grpclib servicer's ``__mapping__`` calls this."""
    routes: dict[str, Any] = getattr(importlib.import_module(module), base).__mapping__(servicer)
    return routes
