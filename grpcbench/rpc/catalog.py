"""What a server offers, as grpcurl's ``list`` and ``describe`` show it.

The descriptors come from where `run` takes a schema: ``--proto`` (compiled),
``--protoset``, or the server's reflection service (with TLS and
``--reflect-metadata``). Reflection is asked lazily, symbol by symbol, while the
catalog is open.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool

from grpcbench.base.errors import UsageError
from grpcbench.rpc import proto_text
from grpcbench.rpc.proto_comments import comment_lines, leading_comments
from grpcbench.rpc.schema import (
    compile_proto,
    did_you_mean,
    read_protoset,
    reflection_database,
)
from grpcbench.rpc.security import ChannelSecurity


@dataclass
class Catalog:
    pool: descriptor_pool.DescriptorPool
    services: list[str]  # fully qualified, sorted
    source: str  # "reflection" or the schema file
    comments: Mapping[str, str] = field(default_factory=dict)  # full name -> leading comment

    def methods(self, service: str) -> list[str]:
        """``package.Service.Method`` of each method of ``service`` (grpcurl's form)."""
        found = self._service(service)
        return sorted(method.full_name for method in found.methods)  # grpcurl's order

    def _service(self, name: str) -> Any:
        if name not in self.services:
            raise UsageError(
                f"no service {name} in {self.source}{did_you_mean(name, self.services)}"
                f" (services: {', '.join(self.services) or 'none'})"
            )
        return self.pool.FindServiceByName(name)

    def _method(self, name: str) -> Any:
        """A method through its service (a reflection server may not index methods)."""
        return _member(name, self.pool.FindServiceByName, "methods_by_name")

    def _field(self, name: str) -> Any:
        """A message's field (pkg.Message.field), as grpcurl describes one."""
        return _member(name, self.pool.FindMessageTypeByName, "fields_by_name")

    def describe(self, symbol: str) -> str:
        """grpcurl's ``describe``: "NAME is a service:" (or message, enum, method) and
        its .proto text. A method may be written Service.Method or Service/Method."""
        name = symbol.strip().lstrip(".").replace("/", ".")
        comments = self.comments
        finders: tuple[tuple[str, Callable[[str], Any], Callable[[Any], str]], ...] = (
            ("service", self.pool.FindServiceByName,
             lambda found: proto_text.service_text(found, comments)),
            ("message", self.pool.FindMessageTypeByName,
             lambda found: proto_text.message_text(found, 0, comments)),
            ("enum", self.pool.FindEnumTypeByName,
             lambda found: proto_text.enum_text(found, 0, comments)),
            ("method", self._method, proto_text.method_line),
            ("field", self._field, proto_text.field_line),
        )  # fmt: skip
        for kind, find, render in finders:
            try:
                found = find(name)
            except KeyError:
                continue
            article = "an" if kind == "enum" else "a"
            lines = (
                [*comment_lines(comments, found.full_name)] if kind in ("method", "field") else []
            )
            return "\n".join([f"{found.full_name} is {article} {kind}:", *lines, render(found)])
        raise UsageError(
            f"symbol {symbol} not found in {self.source}{did_you_mean(name, self.services)}"
        )


def _member(name: str, find_parent: Callable[[str], Any], members: str) -> Any:
    """``parent.member`` looked up in its parent's ``members`` (KeyError: none)."""
    parent, _, member = name.rpartition(".")
    found = getattr(find_parent(parent), members).get(member)
    if found is None:
        raise KeyError(name)
    return found


def _pool_of(files: bytes) -> tuple[descriptor_pool.DescriptorPool, list[str]]:
    pool = descriptor_pool.DescriptorPool()
    services = []
    for file in descriptor_pb2.FileDescriptorSet.FromString(files).file:
        pool.Add(file)
        prefix = f"{file.package}." if file.package else ""
        services += [prefix + service.name for service in file.service]
    return pool, sorted(services)


@contextmanager
def open_catalog(
    address: str | None,
    security: ChannelSecurity,
    proto: str | None = None,
    import_paths: tuple[str, ...] = (),
    protoset: str | None = None,
    reflect_metadata: str = "{}",
) -> Iterator[Catalog]:
    """A schema file's catalog, or the server's reflection service at ``address``."""
    if proto and protoset:
        raise UsageError("give --proto or --protoset, not both")
    if proto or protoset:
        files = (
            compile_proto(proto, import_paths, source_info=True)
            if proto
            else read_protoset(str(protoset))
        )
        pool, services = _pool_of(files)
        yield Catalog(pool, services, str(proto or protoset), leading_comments(files))
        return
    if not address:
        raise UsageError(
            "give the server's HOST:PORT (its reflection service), --proto or --protoset"
        )
    with reflection_database(address, security, reflect_metadata) as (database, services):
        pool = descriptor_pool.DescriptorPool(database)
        yield Catalog(pool, services, f"{address}'s reflection")
