"""Catalogue of server kinds: what each is, its typed options, and where its code lives.

Only metadata lives here, so listing kinds and parsing specs never imports
grpcio, grpclib or uvloop; the implementation module is imported inside the
server subprocess. What a kind takes is declared on its entry: its options (each a
``SpecOption`` with a type: a count, a flag, a size or a name), whether it runs on
uvloop, and whose servicers it serves (``servicers_from``: a grpcio variant serves
every service that has grpcio servicers). Parsing, checks, ``grpcbench servers``
and ``--servers``' help read these declarations. Adding a kind is one module with
``serve(service, spec, params, host, port)`` plus one entry: below, or a plugin's
``grpcbench.server_kinds`` entry point (``base.plugins``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from grpcbench.base.errors import UsageError
from grpcbench.base.parsing import parse_size
from grpcbench.base.plugins import Registry

OptionValue = int | bool | str
OptionType = Literal["count", "flag", "size", "name"]

_TRUE = ("true", "1", "yes", "on")
_FALSE = ("false", "0", "no", "off")
_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")
_EXPECTED = {
    "count": "a positive integer",
    "flag": "true or false",
    "size": "a size such as 65536, 64KiB or 4MiB",
    "name": "a name of letters, digits, '_', '.' or '-'",
}


@dataclass(frozen=True)
class SpecOption:
    """One ``key=value`` a server kind takes in its spec."""

    name: str
    type: OptionType
    default: OptionValue
    help: str = ""
    shown: bool = False  # in the spec's label even at its default (workers=10)

    def parse(self, text: str, spec: str) -> OptionValue:
        """The typed value of ``text``; one clear error naming the spec otherwise."""
        value = text.strip()
        bad = UsageError(f"bad value in {spec!r}: {self.name} must be {_EXPECTED[self.type]}")
        if self.type == "count":
            if not value.isdecimal() or int(value) <= 0:
                raise bad
            return int(value)
        if self.type == "flag":
            if value.lower() not in (*_TRUE, *_FALSE):
                raise bad
            return value.lower() in _TRUE
        if self.type == "size":
            try:
                size = parse_size(value, self.name)
            except UsageError:
                raise bad from None
            if size <= 0:
                raise bad
            return size
        if not _NAME.match(value):
            raise bad
        return value

    @staticmethod
    def text(value: OptionValue) -> str:
        """How a value reads in a label (and parses back to itself)."""
        return ("true" if value else "false") if isinstance(value, bool) else str(value)


@dataclass(frozen=True)
class ServerKindInfo:
    name: str
    description: str
    module: str
    supports_uvloop: bool
    options: tuple[SpecOption, ...] = ()
    # The kind whose servicers this one serves ("": its own, servicers[name]).
    servicers_from: str = ""

    @property
    def servicer_kind(self) -> str:
        """The key of a service's ``servicers`` this kind serves."""
        return self.servicers_from or self.name

    @property
    def syntax(self) -> str:
        """``grpcio[:workers=10,processes=1]``, for listings and help."""
        modifiers = "[+uvloop]" if self.supports_uvloop else ""
        options = ",".join(f"{o.name}={SpecOption.text(o.default)}" for o in self.options)
        return f"{self.name}{modifiers}" + (f"[:{options}]" if options else "")


KINDS: Registry[ServerKindInfo] = Registry(
    "grpcbench.server_kinds",
    ServerKindInfo,
    (
        ServerKindInfo(
            name="grpcio",
            description="sync grpc.server with a ThreadPoolExecutor of `workers` threads,"
            " in `processes` processes sharing the port (SO_REUSEPORT)",
            module="grpcbench.servers.grpcio_sync",
            supports_uvloop=False,
            options=(
                SpecOption("workers", "count", 10, "thread-pool size", shown=True),
                SpecOption("processes", "count", 1, "processes sharing the port"),
            ),
        ),
        ServerKindInfo(
            name="grpclib",
            description="async grpclib server on asyncio (add +uvloop for uvloop)",
            module="grpcbench.servers.grpclib_async",
            supports_uvloop=True,
        ),
        ServerKindInfo(
            name="grpcio-aio",
            description="grpcio's asyncio API, grpc.aio.server (add +uvloop for uvloop)",
            module="grpcbench.servers.grpcio_aio",
            supports_uvloop=True,
        ),
    ),
)


def kinds_help() -> str:
    """The kinds as `--servers` and `grpcbench servers` list them."""
    return "; ".join(f"{info.syntax}: {info.description}" for info in KINDS.values())


def serves(service_kinds: tuple[str, ...], kind: str) -> bool:
    """Whether a service with servicers for ``service_kinds`` can run on server ``kind``."""
    return kind in KINDS and KINDS[kind].servicer_kind in service_kinds


def kinds_serving(service_kinds: tuple[str, ...]) -> tuple[str, ...]:
    """Every server kind a service with these servicers runs on."""
    return tuple(name for name in KINDS if serves(service_kinds, name))
