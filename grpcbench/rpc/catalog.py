"""What a server offers, as grpcurl's ``list`` and ``describe`` show it.

The descriptors come from where `run` takes a schema: ``--proto`` (compiled),
``--protoset``, or the server's reflection service (with TLS and
``--reflect-metadata``). Reflection is asked lazily, symbol by symbol, while the
catalog is open.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool

from grpcbench.base.errors import UsageError
from grpcbench.rpc import proto_text
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
        service, _, method = name.rpartition(".")
        found = self.pool.FindServiceByName(service).methods_by_name.get(method)
        if found is None:
            raise KeyError(name)
        return found

    def describe(self, symbol: str) -> str:
        """grpcurl's ``describe``: "NAME is a service:" (or message, enum, method) and
        its .proto text. A method may be written Service.Method or Service/Method."""
        name = symbol.strip().lstrip(".").replace("/", ".")
        finders = (
            ("service", self.pool.FindServiceByName, proto_text.service_text),
            ("message", self.pool.FindMessageTypeByName, proto_text.message_text),
            ("enum", self.pool.FindEnumTypeByName, proto_text.enum_text),
            ("method", self._method, proto_text.method_line),
        )
        for kind, find, render in finders:
            try:
                found = find(name)
            except KeyError:
                continue
            article = "an" if kind == "enum" else "a"
            return f"{found.full_name} is {article} {kind}:\n{render(found)}"
        raise UsageError(
            f"symbol {symbol} not found in {self.source}{did_you_mean(name, self.services)}"
        )


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
        files = compile_proto(proto, import_paths) if proto else read_protoset(str(protoset))
        pool, services = _pool_of(files)
        yield Catalog(pool, services, str(proto or protoset))
        return
    if not address:
        raise UsageError(
            "give the server's HOST:PORT (its reflection service), --proto or --protoset"
        )
    with reflection_database(address, security, reflect_metadata) as (database, services):
        pool = descriptor_pool.DescriptorPool(database)
        yield Catalog(pool, services, f"{address}'s reflection")
