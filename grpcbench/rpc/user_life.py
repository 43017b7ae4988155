"""A user's life: a ``--workload`` class whose instances are virtual users, with state
their flows read and write (Locust's ``on_start``/``on_stop``, k6's per-user setup).

    class Shopper:
        async def on_start(self, client):
            login = await client.unary("shop.Shop/Login", {"user": "u"}, name="login")
            self.token = login.token
        async def flow(self, client):
            await client.unary("shop.Shop/Buy", {"item": 1}, metadata={"token": self.token})
        async def on_stop(self, client):
            await client.unary("shop.Shop/Logout", {"token": self.token}, name="logout")

In a closed loop each virtual user is one instance. Its ``on_start`` runs before
its first flow and is not in that flow's latency; its ``on_stop`` runs after its
last, when the phase's calls end. A failed ``on_start`` is that turn's call, with
its status, and the user starts again on its next turn. Where no user lives across
calls (each arrival of an open loop, the pre-flight run), one call is a whole
life: ``on_start``, ``flow``, ``on_stop``. The calls the hooks make are steps,
counted under their names as the flow's are.

Starting and stopping go through the loop's own call function, so they run on the
connection the user's calls take (its own with ``--connections per-user``): the
closed loop marks the task's turn, and the call runs the hook instead of the flow.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import Awaitable, Callable
from typing import Any

import grpc

from grpcbench.base.errors import UsageError
from grpcbench.contract.calls import CallFunction, WorkloadError

# Runs one of the user's functions as a flow is run (its client, its errors): returns
# how many steps it made.
RunHook = Callable[[Callable[[Any], Awaitable[Any]]], Awaitable[int]]


def check_user_class(user_class: type, reference: str) -> None:
    """One line, at planning, for a class that cannot be a virtual user."""
    for name in ("flow", "on_start", "on_stop"):
        hook = getattr(user_class, name, None)
        if hook is None and name != "flow":
            continue
        if not inspect.iscoroutinefunction(hook):
            raise UsageError(
                f"workload {reference!r} is a class: give it `async def {name}(self, client)`"
            )


class VirtualUsers:
    """The loops' ``UserLife`` for a ``--workload`` class: one instance per user task."""

    def __init__(self, user_class: type) -> None:
        self.user_class = user_class  # checked by check_user_class when it was loaded
        self._living: dict[asyncio.Task[Any], Any] = {}
        self._turns: dict[asyncio.Task[Any], str] = {}  # a task's "start" or "stop" call

    # --- the closed loop's side (contract.calls.UserLife)

    async def start(self, call: CallFunction, timeout_s: float) -> None:
        await self._turn("start", call, timeout_s)

    async def stop(self, call: CallFunction, timeout_s: float) -> None:
        """The user's on_stop, bounded by one call deadline; a failure is in its steps'
        rows, and ends nothing else."""
        # asyncio.timeout, not wait_for: the turn must run in the user's own task.
        with contextlib.suppress(grpc.aio.AioRpcError, WorkloadError, TimeoutError):
            async with asyncio.timeout(timeout_s):
                await self._turn("stop", call, timeout_s)

    async def _turn(self, turn: str, call: CallFunction, timeout_s: float) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._turns[task] = turn
        try:
            await call(timeout_s)
        finally:
            self._turns.pop(task, None)

    # --- the call's side: what one call of the workload runs

    async def call(self, run: RunHook) -> int | None:
        """This task's turn: its start or stop (None: not a flow), else its flow; a task
        with no user (an open loop's arrival, the pre-flight) lives a whole life."""
        task = asyncio.current_task()
        turn = self._turns.get(task) if task is not None else None
        if turn == "start":
            user = await self._new(run)
            self._living[task] = user  # type: ignore[index]
            return None
        if turn == "stop":
            user = self._living.pop(task, None)  # type: ignore[arg-type]
            if user is not None:
                await self._hook(user, "on_stop", run)
            return None
        user = self._living.get(task) if task is not None else None
        if user is not None:
            return await run(user.flow)
        user = await self._new(run)
        try:
            return await run(user.flow)
        finally:  # its failure is in its steps' rows, and does not hide the flow's
            with contextlib.suppress(grpc.aio.AioRpcError, WorkloadError):
                await self._hook(user, "on_stop", run)

    async def _new(self, run: RunHook) -> Any:
        """A new user: the instance (its class's errors read as a flow's), then its on_start."""
        made: list[Any] = []

        async def construct(_: Any) -> None:
            made.append(self.user_class())

        await run(construct)
        await self._hook(made[0], "on_start", run)
        return made[0]

    @staticmethod
    async def _hook(user: Any, name: str, run: RunHook) -> None:
        hook = getattr(user, name, None)
        if hook is not None:
            await run(hook)
