"""A server somebody else runs (``--target HOST:PORT``, maybe ``--target-pid``)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass

import psutil

from grpcbench.rpc.security import PLAINTEXT, ChannelSecurity
from grpcbench.servers.launcher import check_reachable
from grpcbench.targets.base import Target, TargetContext


@dataclass(frozen=True)
class ExternalTarget:
    label: str
    address: str
    pid: int | None
    security: ChannelSecurity = PLAINTEXT  # read and resolved once, when it opened

    def failure(self) -> str | None:
        """Only a watched process can be seen to die; calls failing say the rest."""
        if self.pid is not None and not psutil.pid_exists(self.pid):
            return f"target process {self.pid} is gone"
        return None


@dataclass(frozen=True)
class ExternalTargetPlan:
    address: str
    pid: int | None = None
    target_type: str = "external"

    @property
    def label(self) -> str:
        return self.address

    @property
    def server_kind(self) -> str | None:
        return None

    def open(self, context: TargetContext) -> AbstractAsyncContextManager[Target]:
        return self._open(context)

    @asynccontextmanager
    async def _open(self, context: TargetContext) -> AsyncIterator[Target]:
        # The TLS files read (and --skipTLS's certificate fetched) for this address, and
        # the target reached, from where the load will come (context.check_site).
        security = await context.check_site(
            reach, self.address, context.security, not context.reached_by_preflight
        )
        yield ExternalTarget(self.address, self.address, self.pid, security)


def reach(address: str, security: ChannelSecurity, check: bool = True) -> ChannelSecurity:
    """Resolve the TLS settings for ``address`` and (``check``) check a gRPC server
    answers there; plain and synchronous, so a cluster worker can run it
    (targets.check_site). Without ``check`` the pre-flight call checks it."""
    resolved = security.resolve(address)
    if check:
        asyncio.run(check_reachable(address, resolved))
    return resolved
