"""The pre-flight call, run where the load will come from (here, or a cluster worker).

A plain, picklable function (``targets.check_site`` runs it in a thread here, or on a
Dask worker): one real call of the level's own workload before the first level, so a
wrong method, data or credential is one line, not a level of failures. User code in
it (a flow) runs in this process: a fork it makes is stopped and said.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, TypeVar

from grpcbench.base.errors import PreflightError
from grpcbench.base.processes import stop_forked_copies
from grpcbench.load.engine import make_workload
from grpcbench.load.loop_watchdog import TICK_S
from grpcbench.model.load_result import GeneratorJob
from grpcbench.observe.memory_peak import current_rss_bytes
from grpcbench.rpc.client_options import ClientOptions
from grpcbench.rpc.preflight import preflight
from grpcbench.rpc.security import ChannelSecurity
from grpcbench.rpc.workload import MethodWorkload

T = TypeVar("T")


def preflight_here(
    address: str, security: ChannelSecurity, spec_json: dict[str, Any], what: str,
    timeout_s: float, expected: tuple[str, ...], client: ClientOptions,
) -> None:  # fmt: skip
    """The pre-flight call, plain and synchronous, where the probe runs it (here or a
    cluster worker): the level's own workload, built from its spec, numbered after
    the level's calls (a timed level's: ``PREFLIGHT_NUMBER``)."""
    spec = GeneratorJob.from_json(spec_json)
    mix = (spec.call or {}).get("mix")
    if mix:  # a mix: one pre-flight call per method, each named in its failure
        for part in mix:
            preflight_here(
                address, security, {**spec_json, "call": part}, part.get("label") or part["call"],
                part.get("timeout_s") or timeout_s, tuple(part.get("expected") or expected),
                client,
            )  # fmt: skip
        return
    workload = make_workload(spec)
    if isinstance(workload, MethodWorkload):
        calls = spec.share.requests + spec.share.warmup_requests
        workload.as_preflight(calls if spec.share.requests else PREFLIGHT_NUMBER)
    asyncio.run(preflight(
        address, security, workload, what, timeout_s, expected, client,
        spec.settings.connect_timeout_s,
    ))  # fmt: skip
    if stop_forked_copies():  # made by user code (a flow) in this process
        raise PreflightError(
            f"the pre-flight call of {what} forked this process: user code must not fork;"
            " the copy was stopped"
        )


# A timed level's call count is not known: its pre-flight call is numbered this.
PREFLIGHT_NUMBER = 1_000_000_000


async def bounded(check: Awaitable[T], what: str, limit_s: float, memory_bytes: int) -> T:
    """``check``'s result, unless the user code in it (a flow, run in this process) holds
    it past ``limit_s`` or grows this process by ``memory_bytes``: then one line.
    The thread it runs in cannot be stopped, and is left to end with the process."""
    task = asyncio.ensure_future(check)
    loop = asyncio.get_running_loop()
    deadline, baseline = loop.time() + limit_s, current_rss_bytes()
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=TICK_S)
            if done:
                return task.result()
            if current_rss_bytes() - baseline > memory_bytes:
                raise PreflightError(
                    f"the pre-flight call of {what} grew grpcbench's memory by more than"
                    f" {memory_bytes / 1024**3:g} GiB (--generator-memory-limit): user code"
                    " that keeps what it allocates"
                )
            if loop.time() > deadline:
                raise PreflightError(
                    f"the pre-flight call of {what} did not end within {limit_s:g} s: code"
                    " that blocks (time.sleep, a lock, a busy loop) or never returns"
                )
    finally:
        task.cancel()
