"""The runner: for each server, start it, drive every level with every driver, stop it.

Servers run one after another (never two at once, so they do not compete for
the machine), each in a fresh process for all its levels. Results are exported
after every level, so Ctrl-C or a failure keeps what was measured.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import AsyncIterator
from contextlib import ExitStack, asynccontextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from grpcbench.errors import DriverError, UsageError
from grpcbench.events import NullEvents, RunEvents
from grpcbench.load.driver import LoadDriver, make_driver, run_monitored
from grpcbench.load.model import LoadSpec
from grpcbench.metadata import collect_metadata
from grpcbench.options import LevelPlan, RunOptions
from grpcbench.report.csv_export import write_csv
from grpcbench.report.markdown import write_markdown
from grpcbench.results import LevelResult, RunRecord, now_iso, write_json_atomically
from grpcbench.servers.launcher import RunningServer, check_reachable, start_server
from grpcbench.servers.spec import ServerSpec
from grpcbench.services.registry import load_service


@dataclass(frozen=True)
class Column:
    """One column of the tables: a server grpcbench starts, or an external target."""

    label: str
    spec: ServerSpec | None


class Runner:
    def __init__(self, options: RunOptions, events: RunEvents | None = None) -> None:
        self.options = options
        self.events = events or NullEvents()
        self.record = RunRecord(options=options.to_json(), metadata=collect_metadata())
        self.server_params: dict[str, Any] = dict(options.scenario.server_params)
        self.workload_context: dict[str, Any] = {}
        self.service = load_service(options.scenario.service)
        self.drivers: list[LoadDriver] = [
            make_driver(name, options.client_processes, options.ghz) for name in options.drivers
        ]

    def export(self) -> None:
        """Write every requested file; called after each level and at the end."""
        if self.options.output:
            write_json_atomically(self.options.output, self.record.to_json())
        if self.options.markdown:
            write_markdown(self.record, self.options.markdown)
        if self.options.csv:
            write_csv(self.record.levels, self.options.csv)

    async def run(self) -> RunRecord:
        # Backing services and data live as long as the run, errors and Ctrl-C included.
        with ExitStack() as stack:
            workdir = stack.enter_context(tempfile.TemporaryDirectory(prefix="grpcbench-"))
            return await self._run(Path(workdir), stack)

    def _prepare(self, workdir: Path, stack: ExitStack) -> None:
        """Let the service build its data and backing services once, for every server kind.

        Runs on the main thread on purpose: children started here must not be
        tied (PR_SET_PDEATHSIG) to a worker thread that may exit first."""
        if self.service.prepare and not self.options.target:
            self.server_params = self.service.prepare(self.server_params, workdir, stack)
        if self.service.workload_context:
            self.workload_context = self.service.workload_context(self.server_params)

    async def _run(self, workdir: Path, stack: ExitStack) -> RunRecord:
        try:
            self._prepare(workdir, stack)
            # Repeats outermost: drift over time then hits every server alike.
            for repeat in range(self.options.repeat):
                for column in self._columns():
                    async with self._server(column) as (address, pid, server):
                        await self._run_levels(column, address, pid, server, repeat)
        except asyncio.CancelledError:
            self.record.finish("interrupted")
            self.export()
            raise
        except UsageError as error:
            self.record.finish("failed", str(error))
            self.export()
            raise
        if self.record.level_errors:
            failures = self.record.level_errors
            message = f"{len(failures)} level(s) could not be measured; first: {failures[0]}"
            self.record.finish("failed", message)
            self.export()
            raise DriverError(message)
        self.record.finish("complete")
        self.export()
        return self.record

    def _columns(self) -> list[Column]:
        if self.options.target:
            return [Column(self.options.target, None)]
        return [Column(spec.label, spec) for spec in self.options.servers]

    @asynccontextmanager
    async def _server(
        self, column: Column
    ) -> AsyncIterator[tuple[str, int | None, RunningServer | None]]:
        options = self.options
        self.events.server_starting(column.label)
        if column.spec is None:
            assert options.target
            await check_reachable(options.target)
            self.events.server_ready(column.label, options.target, options.target_pid)
            yield options.target, options.target_pid, None
            return
        if self.service.reset:
            self.service.reset(self.server_params)
        server = await start_server(
            column.spec,
            options.scenario.service,
            self.server_params,
            cpus=options.placement.server_cpus,
            port=options.port,
        )
        try:
            self.events.server_ready(column.label, server.address, server.pid)
            yield server.address, server.pid, server
        finally:
            await server.stop()

    async def _run_levels(
        self,
        column: Column,
        address: str,
        pid: int | None,
        server: RunningServer | None,
        repeat: int,
    ) -> None:
        for plan in self.options.level_plans():
            for driver in self.drivers:
                try:
                    level = await self._run_level(column, driver, plan, address, pid)
                    level = replace(level, repeat=repeat)
                except DriverError as error:
                    where = f"{column.label} [{driver.name}] {plan.describe()}"
                    self.record.level_errors.append(f"{where}: {error}")
                    self.export()
                    self.events.warning(f"{where} failed: {error}")
                    continue
                self.record.levels.append(level)
                self.export()
                self.events.level_finished(level)
                if server and server.child.process.returncode is not None:
                    self.events.warning(
                        f"server {column.label} died during {plan.describe()}"
                        f" (exit code {server.child.process.returncode}); skipping its other"
                        f" levels. Its stderr:\n{server.child.stderr_tail()}"
                    )
                    return

    async def _run_level(
        self, column: Column, driver: LoadDriver, plan: LevelPlan, address: str, pid: int | None
    ) -> LevelResult:
        options = self.options
        strategy = options.connections
        spec = LoadSpec(
            target=address,
            service=options.scenario.service,
            concurrency=plan.concurrency,
            requests=options.requests,
            duration_s=options.duration_s,
            warmup_requests=options.warmup_requests,
            warmup_s=options.warmup_s,
            timeout_s=options.timeout_s,
            connections=options.connections_for(plan),
            connection_mode="per-request" if strategy.mode == "per-request" else "pool",
            pool_policy=strategy.policy,
            rate=plan.rate,
            arrivals=options.arrivals,
            max_level_s=options.max_level_s,
            workload_params={**self.workload_context, **options.workload_params(plan)},
            cpus=options.placement.client_cpus,
        )
        if self.service.check_level:
            self.service.check_level(self.server_params, spec.workload_params, spec.concurrency)
        # total is 0 for time-based levels: the progress bar is then indeterminate.
        self.events.level_started(column.label, driver.name, plan.describe(), options.requests)
        started_at = now_iso()
        load, usage = await run_monitored(driver, spec, pid, self.events.level_progress)
        return LevelResult(
            scenario=options.scenario.name,
            server=column.label,
            driver=driver.name,
            concurrency=plan.concurrency,
            load=load,
            server_usage=usage,
            started_at=started_at,
            finished_at=now_iso(),
            connection=f"pool:{plan.channels}" if plan.channels else strategy.label,
            channels=plan.channels,
            rate=plan.rate,
            variant=plan.variant,
        )
