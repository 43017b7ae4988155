"""k6's ``setup()`` and ``teardown(data)``: once per server, around all its levels.

A ``--workload`` module may define, beside its flow (or class of virtual users):

    async def setup(client):              # once, before the pre-flight call and the levels
        account = await client.unary("shop.Shop/CreateAccount", {"name": "load"})
        return {"account": account.id}   # JSON: every generator process gets a copy

    async def flow(client):
        await client.unary("shop.Shop/Buy", {"account": client.setup_data["account"]})

    async def teardown(client, data):     # once, after the server's last level
        await client.unary("shop.Shop/DeleteAccount", {"id": data["account"]})

Their calls are not measured. What ``setup`` returns crosses to the generator
processes (and Dask workers) as JSON, so it must be JSON; it is never printed or
saved, and a cluster sends it only as it sends the metadata (``_secrets_sent``).
Per-user life (``on_start``/``on_stop``) is ``rpc.user_life``'s.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import grpc

from grpcbench.base.errors import PreflightError, UsageError
from grpcbench.contract.calls import WorkloadError
from grpcbench.rpc.client_options import ClientOptions
from grpcbench.rpc.flow import FlowClient, FlowWorkload, PlannedFlow
from grpcbench.rpc.preflight import explain
from grpcbench.rpc.reachability import wait_ready
from grpcbench.rpc.security import ChannelSecurity

HOOKS = ("setup", "teardown")
# How long each may take in all (k6's setupTimeout and teardownTimeout).
HOOK_LIMIT_S = 60.0


def hooks_of(reference: str) -> dict[str, Callable[..., Awaitable[Any]]]:
    """The ``setup`` and ``teardown`` that ``reference``'s module defines (either, both
    or none); one UsageError for one that is not ``async def``. The module is the
    flow's, already imported when the flow was loaded."""
    module = sys.modules.get(reference.partition(":")[0])
    found = {}
    for name in HOOKS:
        hook = getattr(module, name, None)
        if hook is None:
            continue
        if not inspect.iscoroutinefunction(hook):
            signature = "client" if name == "setup" else "client, data"
            raise UsageError(
                f"{name} in the module of workload {reference!r} must be `async def"
                f" {name}({signature})` (run once per server, k6's {name})"
            )
        found[name] = hook
    return found


def run_hook_here(
    name: str, address: str, security: ChannelSecurity, flow_json: dict[str, Any],
    timeout_s: float, client: ClientOptions, connect_timeout_s: float,
) -> str:  # fmt: skip
    """``setup`` (returns its data as JSON) or ``teardown`` (given the flow's
    ``setup_data``), plain and synchronous, where the checks run (here or a cluster
    worker, ``targets.check_site``)."""
    flow = PlannedFlow.from_json(flow_json)
    return asyncio.run(_run_hook(name, address, security, flow, timeout_s, client,
                                 connect_timeout_s))  # fmt: skip


async def _run_hook(
    name: str, address: str, security: ChannelSecurity, flow: PlannedFlow, timeout_s: float,
    client: ClientOptions, connect_timeout_s: float,
) -> str:  # fmt: skip
    workload = FlowWorkload(flow)  # imports the flow's module in this process too
    hook = hooks_of(flow.function)[name]
    channel = security.aio_channel(address, client)
    what = f"the workload's {name}()"
    try:
        await wait_ready(channel, address, security, connect_timeout_s)
        flow_client = FlowClient(channel, workload, {}, timeout_s)
        args = (flow_client,) if name == "setup" else (flow_client, workload.setup_data)
        try:
            result = await asyncio.wait_for(hook(*args), HOOK_LIMIT_S)
        except grpc.aio.AioRpcError as error:
            raise PreflightError(f"{what} failed: {await explain(error, address, security, what)}"
                                 ) from None  # fmt: skip
        except TimeoutError:
            raise PreflightError(f"{what} did not finish within {HOOK_LIMIT_S:g}s") from None
        except (WorkloadError, UsageError) as error:
            raise PreflightError(f"{what} failed: {error}") from None
        except Exception as error:  # noqa: BLE001 - the user's code may raise anything
            raise PreflightError(f"{what} raised {type(error).__name__}: {error}"[:300]) from None
    finally:
        await channel.close()
    if name == "teardown":
        return "null"
    try:
        return json.dumps(result)
    except (TypeError, ValueError):
        raise PreflightError(
            f"{what} returned a {type(result).__name__}, not JSON: what it returns goes to"
            " every generator process as JSON (a dict, list, str, number, bool or None)"
        ) from None
