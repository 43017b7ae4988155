"""A server grpcbench starts itself: one subprocess per column and repeat, stopped after."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass

from grpcbench.rpc.security import PLAINTEXT, ChannelSecurity
from grpcbench.servers.launcher import RunningServer, start_server
from grpcbench.servers.spec import ServerSpec
from grpcbench.services.registry import load_service, service_reference
from grpcbench.targets.base import Target, TargetContext


@dataclass(frozen=True)
class StartedServer:
    server: RunningServer

    @property
    def label(self) -> str:
        return self.server.spec.label

    @property
    def address(self) -> str:
        return self.server.address

    @property
    def pid(self) -> int | None:
        return self.server.pid

    @property
    def security(self) -> ChannelSecurity:
        return PLAINTEXT  # the servers grpcbench starts speak plaintext (options check it)

    def failure(self) -> str | None:
        code = self.server.child.process.returncode
        if code is None:
            return _frozen(self.label, self.server.child.pid)
        tail = self.server.child.stderr_tail()
        return f"server {self.label} exited (code {code})" + (
            f"; its stderr:\n{tail}" if tail else ""
        )


def _frozen(label: str, pid: int) -> str | None:
    """A server that is alive but stopped (SIGSTOP, Ctrl-Z): it answered nothing since,
    so the level it was in measured a stall, not the server. A tracing stop is not one:
    py-spy --native pauses the server for each sample."""
    import psutil

    try:
        state = psutil.Process(pid).status()
    except psutil.Error:
        return None
    if state == psutil.STATUS_STOPPED:
        return f"server {label} was stopped (SIGSTOP) during the level"
    return None


@dataclass(frozen=True)
class StartedServerPlan:
    spec: ServerSpec
    target_type: str = "server"

    @property
    def label(self) -> str:
        return self.spec.label

    @property
    def server_kind(self) -> str | None:
        return self.spec.kind

    def open(self, context: TargetContext) -> AbstractAsyncContextManager[Target]:
        return self._open(context)

    @asynccontextmanager
    async def _open(self, context: TargetContext) -> AsyncIterator[Target]:
        """The server, started; on a normal close its stop goes on in the background
        (``context.stops``) while the next server starts, on a port of its own (port
        0: a fixed --port must be free first). Each server awaits the stops before it
        is measured, and before a service resets the data the last one served."""
        stops = context.stops if context.port == 0 else None
        service = load_service(context.service)
        if service.reset:  # every server kind starts from the same data
            if stops is not None:
                await stops.settled()
            service.reset(context.server_params)
        server = await start_server(
            self.spec,
            service_reference(context.service),
            context.server_params,
            cpus=context.server_cpus,
            port=context.port,
            ready_timeout_s=context.start_timeout_s,
            host=context.host,
        )
        try:
            if stops is not None:
                await stops.settled()  # the last server has exited: it takes no CPU
            yield StartedServer(server)
        except BaseException:  # a failure or Ctrl-C: stopped now
            await server.stop()
            raise
        if stops is not None:
            stops.begin(server.stop())
        else:
            await server.stop()
