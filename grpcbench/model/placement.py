"""Where a run's processes run: the server's, the generator's and the backing
services' CPUs, from --pin, --server-cpus, --client-cpus and --backing-cpus (and
grpcbench's own process beside the generator), and how many generator processes
``--client-processes auto`` means on them."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Any

from grpcbench.base.errors import UsageError
from grpcbench.base.parsing import decimal, parse_cpu_set


@dataclass(frozen=True)
class Placement:
    """Which CPUs the server and the load generator may run on (empty = anywhere)."""

    server_cpus: tuple[int, ...] = ()
    client_cpus: tuple[int, ...] = ()
    chosen_backing_cpus: tuple[int, ...] = ()  # --backing-cpus; empty: the generator's
    # Where grpcbench's own process (the coordinator: live telemetry, merging, the
    # console) runs: the generator's CPUs when pinned, never the server's (empty: any).
    coordinator_cpus: tuple[int, ...] = ()

    @property
    def backing_cpus(self) -> tuple[int, ...]:
        """Where embedded S3, MongoDB and PostgreSQL run: off the server's CPUs, on their
        own (``--backing-cpus``) or beside the generator."""
        return self.chosen_backing_cpus or self.client_cpus

    def describe(self) -> str:
        """In words, for headers and reports: "server on CPU 0, generator on CPU 1"."""

        def cpus(values: tuple[int, ...]) -> str:
            if not values:
                return "any CPU"
            return ("CPU " if len(values) == 1 else "CPUs ") + ",".join(map(str, values))

        coordinator = f", grpcbench itself on {cpus(self.coordinator_cpus)}"
        if self.chosen_backing_cpus:
            return (
                f"server on {cpus(self.server_cpus)}, generator on {cpus(self.client_cpus)},"
                f" embedded backing services on {cpus(self.chosen_backing_cpus)}{coordinator}"
            )
        return (
            f"server on {cpus(self.server_cpus)}, generator (and any embedded backing service)"
            f" on {cpus(self.client_cpus)}{coordinator}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "server_cpus": list(self.server_cpus),
            "client_cpus": list(self.client_cpus),
            "backing_cpus": list(self.backing_cpus),
            "coordinator_cpus": list(self.coordinator_cpus),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Placement:
        client = tuple(int(c) for c in data.get("client_cpus") or ())
        backing = tuple(int(c) for c in data.get("backing_cpus") or ())
        return cls(
            tuple(int(c) for c in data.get("server_cpus") or ()),
            client,
            backing if backing != client else (),
            tuple(int(c) for c in data.get("coordinator_cpus") or ()),  # before: not pinned
        )


def default_placement() -> Placement:
    """Server on the first allowed CPU, generator on the others (if there are others)."""
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except AttributeError:
        return Placement((), ())
    if len(cpus) < 2:
        return Placement((), ())
    return Placement((cpus[0],), tuple(cpus[1:]), coordinator_cpus=tuple(cpus[1:]))


def build_placement(
    pin: bool, server_cpus: str | None, client_cpus: str | None, backing_cpus: str | None = None
) -> Placement:
    if not pin:
        if server_cpus or client_cpus or backing_cpus:
            raise UsageError(
                "--no-pin cannot be combined with --server-cpus/--client-cpus/--backing-cpus"
            )
        return Placement((), ())
    default = default_placement()
    placement = Placement(
        parse_cpu_set(server_cpus, "--server-cpus") if server_cpus else default.server_cpus,
        parse_cpu_set(client_cpus, "--client-cpus") if client_cpus else default.client_cpus,
        parse_cpu_set(backing_cpus, "--backing-cpus") if backing_cpus else (),
    )
    # grpcbench's own process goes beside the generator: off the server's CPUs, and its
    # CPU time is then what the generator's CPUs lose to neighbours (it was anywhere).
    placement = replace(placement, coordinator_cpus=placement.client_cpus)
    if hasattr(os, "sched_getaffinity"):
        allowed = os.sched_getaffinity(0)
        used = placement.server_cpus + placement.client_cpus + placement.backing_cpus
        bad = sorted(set(used) - allowed)
        if bad:
            raise UsageError(f"CPU {bad[0]} is not available (allowed: {sorted(allowed)})")
    return placement


def parse_client_processes(text: str, option: str = "--client-processes") -> int | None:
    """A positive count, or None for ``auto`` (resolved with the placement)."""
    if text.strip() == "auto":
        return None
    value = decimal(text)
    if value is None or value <= 0:
        raise UsageError(f"bad {option} {text[:40]!r}: a positive integer or auto")
    return value


def resolve_client_processes(count: int | None, placement: Placement) -> int:
    """``auto`` (None): one generator process per client CPU (each is one Python thread)."""
    if count is None:
        return max(1, len(placement.client_cpus) or (os.cpu_count() or 2) // 2)
    return count
