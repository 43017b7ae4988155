"""Where a run's processes run: the server's, the generator's and the backing
services' CPUs, from --pin, --server-cpus, --client-cpus and --backing-cpus, and how
many generator processes ``--client-processes auto`` means on them."""

from __future__ import annotations

import os

from grpcbench.base.errors import UsageError
from grpcbench.base.parsing import decimal, parse_cpu_set
from grpcbench.model.plan import Placement


def default_placement() -> Placement:
    """Server on the first allowed CPU, generator on the others (if there are others)."""
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except AttributeError:
        return Placement((), ())
    if len(cpus) < 2:
        return Placement((), ())
    return Placement((cpus[0],), tuple(cpus[1:]))


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
