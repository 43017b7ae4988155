"""A server kind's stop overlaps the next kind's start, never its measurement.

``targets.started`` begins the stop in the background on a normal close (port 0)
and the next server awaits it before it is yielded to be warmed up and measured;
a failure, Ctrl-C or a fixed --port stops it at once. ``BackgroundStops`` itself:
settled means every child exited; cancelled, each stop kills its child."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from grpcbench.base.processes import BackgroundStops, start_child
from grpcbench.servers.spec import parse_server_spec
from grpcbench.targets import started
from grpcbench.targets.base import TargetContext
from grpcbench.targets.started import StartedServerPlan


class FakeServer:
    """A started server whose stop takes ``stop_s`` and is logged."""

    def __init__(self, name: str, log: list[str], stop_s: float) -> None:
        self.name, self.log, self.stop_s = name, log, stop_s
        self.address, self.pid = "127.0.0.1:1", 1

    async def stop(self) -> int:
        self.log.append(f"{self.name} stopping")
        await asyncio.sleep(self.stop_s)
        self.log.append(f"{self.name} stopped")
        return 0


def _fake_starts(monkeypatch: pytest.MonkeyPatch, stop_s: float) -> list[str]:
    """Servers A, B, C started in turn by ``start_server``: what they did, in order."""
    log: list[str] = []
    names = iter("ABC")

    async def start_server(*_: Any, **__: Any) -> FakeServer:
        name = next(names)
        log.append(f"{name} starting")
        await asyncio.sleep(0.01)
        log.append(f"{name} ready")
        return FakeServer(name, log, stop_s)

    monkeypatch.setattr(started, "start_server", start_server)
    return log


PLAN = StartedServerPlan(parse_server_spec("grpclib"))


def test_a_stop_goes_on_while_the_next_server_starts_and_ends_before_it_is_used(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    log = _fake_starts(monkeypatch, stop_s=0.1)
    stops = BackgroundStops()
    context = TargetContext(service="hello", stops=stops)

    async def scenario() -> None:
        async with PLAN.open(context):
            log.append("A measured")
        async with PLAN.open(context):
            log.append("B measured")
        await stops.settled()

    asyncio.run(scenario())
    # B starts while A stops, and is measured only once A has exited.
    assert log.index("B starting") < log.index("A stopped") < log.index("B measured")
    assert log[-1] == "B stopped"


def test_a_fixed_port_or_a_failure_stops_the_server_before_anything_else(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    log = _fake_starts(monkeypatch, stop_s=0.01)
    stops = BackgroundStops()

    async def scenario() -> None:
        async with PLAN.open(TargetContext(service="hello", port=50051, stops=stops)):
            pass
        log.append("after A")
        with pytest.raises(RuntimeError):
            async with PLAN.open(TargetContext(service="hello", stops=stops)):
                raise RuntimeError("the level failed")
        log.append("after B")

    asyncio.run(scenario())
    assert log.index("A stopped") < log.index("after A")
    assert log.index("B stopped") < log.index("after B")


def test_settled_waits_for_every_child_and_a_cancel_kills_them(tmp_path: Path) -> None:
    ready = str(tmp_path / "ready")
    ignores_sigterm = (
        "import pathlib, signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN);"
        f" pathlib.Path({ready!r}).touch(); time.sleep(60)"
    )

    async def scenario() -> tuple[int | None, int | None]:
        stops = BackgroundStops()
        quick = await start_child(["sleep", "60"])
        stops.begin(quick.stop())  # SIGTERM ends sleep at once
        await stops.settled()
        quick_code = quick.process.returncode
        stubborn = await start_child([sys.executable, "-c", ignores_sigterm])
        while not Path(ready).exists():  # its SIGTERM handler is set
            await asyncio.sleep(0.02)
        stops.begin(stubborn.stop())  # it ignores SIGTERM: would take STOP_TIMEOUT_S
        settling = asyncio.ensure_future(stops.settled())
        await asyncio.sleep(0.2)
        settling.cancel()  # Ctrl-C while settling
        with pytest.raises(asyncio.CancelledError):
            await settling
        return quick_code, stubborn.process.returncode

    quick_code, stubborn_code = asyncio.run(scenario())
    assert quick_code is not None
    assert stubborn_code == -9  # killed when the settling was cancelled, not left to run
