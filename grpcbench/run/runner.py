"""The runner: for each target, open it, drive every level with every driver, close it.

Servers run one after another (never two measured at once, so they do not compete
for the machine: a server's stop overlaps only the next one's start), each in a
fresh process for all its levels (or for each level, with ``--server-per-level``).
Results are exported after every level, so Ctrl-C or a failure keeps what was measured.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import AsyncIterator
from contextlib import ExitStack, asynccontextmanager
from pathlib import Path
from typing import Any, Protocol

from grpcbench.base.child_setup import process_pinned
from grpcbench.base.errors import DriverError, OneLineError, ServerStartError
from grpcbench.base.parsing import parse_host_port
from grpcbench.base.preparation import PreparationThread
from grpcbench.base.processes import children_mark, reap_all
from grpcbench.load.catalogue import make_driver
from grpcbench.load.driver import LoadDriver, close_driver
from grpcbench.model.events import RunEvents
from grpcbench.model.metadata import collect_metadata
from grpcbench.model.plan import LevelPlan
from grpcbench.model.results import LevelError, LevelResult, RunRecord, RunStatus
from grpcbench.model.warmup import Warmup
from grpcbench.rpc.call import MethodCall
from grpcbench.rpc.client_options import ClientOptions
from grpcbench.rpc.planned import resolve_call
from grpcbench.rpc.security import ChannelSecurity
from grpcbench.run.arguments import secret_options
from grpcbench.run.context import RunContext
from grpcbench.run.flow_life import FlowLife
from grpcbench.run.measure import LevelInterrupted, generator_job
from grpcbench.run.options import RunOptions
from grpcbench.run.preflight_call import bounded, preflight_here
from grpcbench.run.recorded import recorded_options
from grpcbench.servers.kinds import KINDS
from grpcbench.targets import Target, TargetContext, TargetPlan
from grpcbench.targets.base import death_of
from grpcbench.targets.check_site import HERE, CheckSite


class Columns(Protocol):
    """What a run does with each column (a target: a server kind, or a running server).
    `run` measures every level on it (the ``Runner``'s own); ``capacity`` searches its
    rate (``run.capacity_runner.CapacitySearch``). Composed into a ``Runner``, it uses
    the runner's public steps: ``open``, ``preflight``, ``measure``, ``column_failed``."""

    async def run_column(
        self, runner: Runner, plan: TargetPlan, context: TargetContext, repeat: int
    ) -> None: ...

    def annotate(self, record: RunRecord) -> None:
        """Add what this kind of run records to ``record`` before it is written."""
        ...


class Runner:
    def __init__(
        self,
        options: RunOptions,
        events: RunEvents | None = None,
        columns: Columns | None = None,
    ) -> None:
        """Everything that can fail before the first server starts fails here.
        ``columns``: what each column runs (default: every level, `run`'s)."""
        if options.profile is not None:  # py-spy may attach here, before anything starts
            from grpcbench.profile.pyspy import check_attach

            check_attach()
        self.context = RunContext.build(options, events)
        self.options = options
        self.events = self.context.events
        self.exports = self.context.exports
        self.columns = columns
        self.record = RunRecord(
            options=recorded_options(options),
            metadata=collect_metadata(options.secret_params, secret_options()),
        )
        self.server_params: dict[str, Any] = dict(options.scenario.server_params)
        self.service = self.context.service
        self.drivers: list[LoadDriver] = []
        try:
            for name in options.drivers:
                self.drivers.append(make_driver(name, options.driver_settings))
            for driver in self.drivers:  # a cluster's remote workers cannot dial loopback
                check = getattr(driver, "check_reach", None)
                if check is not None:
                    for host in self._target_hosts():
                        check(host)
        except BaseException:  # e.g. ghz missing after a cluster started: stop the cluster
            for driver in self.drivers:
                close_driver(driver)
            raise
        # Per target (see _preflight): how it is reached, and the --call resolved for it.
        self.security: ChannelSecurity = options.security
        self.method_call: MethodCall | None = None
        # The flow's setup() and teardown() around each target (with setup()'s data).
        self.life = FlowLife(options.flow, options.settings, self.events.warning)
        # Where target checks run: a remote cluster's worker, else here (targets.check_site).
        sites = [getattr(driver, "check_site", None) for driver in self.drivers]
        self.check_site: CheckSite = next((site for site in sites if site is not None), HERE)

    def _target_hosts(self) -> set[str]:
        """The hosts the generators dial: --bind for started servers, --target's."""
        hosts = set()
        for plan in self.options.targets:
            address = getattr(plan, "address", None)
            hosts.add(parse_host_port(address)[0] if address else self.options.bind)
        return hosts

    def export(self) -> None:
        """Rewrite the files that follow the run level by level."""
        if self.columns is not None:
            self.columns.annotate(self.record)
        self.exports.after_level(self.record)

    async def run(self) -> RunRecord:
        # Backing services and data live as long as the run, errors and Ctrl-C included.
        mark = children_mark()  # a pytest session's servers, started before, outlive it
        try:
            with ExitStack() as stack:
                stack.enter_context(process_pinned(self.options.placement.coordinator_cpus))
                for driver in self.drivers:  # a cluster's client and processes, last out
                    stack.callback(close_driver, driver)
                workdir = stack.enter_context(tempfile.TemporaryDirectory(prefix="grpcbench-"))
                return await self._run(Path(workdir), stack)
        finally:
            try:
                await self.context.server_stops.settled()  # the last server's stop, at least
            finally:
                await reap_all(after=mark)  # no child of the run is reaped after its loop closed

    async def _prepare(self, workdir: Path, stack: ExitStack) -> None:
        """Let the service build its data and backing services once, for every server kind.

        In a thread that lives as long as the run (see ``preparation``), so Ctrl-C
        stops it at once and its children stay tied to a live thread."""
        needs_servers = any(target.target_type == "server" for target in self.options.targets)
        prepare = self.service.prepare
        if prepare and needs_servers:
            params = self.server_params
            # Backing services keep off the server's CPU (the context's preparation
            # runs them on the generator's CPUs, if pinned).
            thread = PreparationThread(
                self.context.preparation, lambda: prepare(params, workdir, stack)
            )
            stack.callback(thread.release)  # first in, so last out: after the services stop
            self.server_params = await thread.run()
        if self.service.workload_context:
            self.context.workload_context.update(self.service.workload_context(self.server_params))

    async def _run(self, workdir: Path, stack: ExitStack) -> RunRecord:
        for driver in self.drivers:  # e.g. a cluster's workers that waste threads
            for note in getattr(driver, "notes", ()):
                self.events.warning(note)
            warm = getattr(driver, "warm", None)  # generators start while servers do
            if warm is not None:
                warm()
        try:
            await self._prepare(workdir, stack)
            context = TargetContext(
                service=self.options.scenario.service,
                server_params=self.server_params,
                server_cpus=self.options.placement.server_cpus,
                port=self.options.port,
                start_timeout_s=self.options.start_timeout_s,
                security=self.options.security,
                host=self.options.bind,
                check_site=self.check_site,
                # a ghz line opens no connection before the load's, as ghz
                reached_by_preflight=self.options.preflight or self.options.ghz_line,
                stops=self.context.server_stops,
            )
            # Repeats outermost: drift over time then hits every server alike.
            for repeat in range(self.options.repeat):
                for plan in self.options.targets:
                    await self._run_target(plan, context, repeat)
        except asyncio.CancelledError:
            self._finish("interrupted")
            raise
        except OneLineError as error:
            self._finish("failed", str(error))
            raise
        except Exception as error:  # a bug: keep what was measured, then let it surface
            self._finish("failed", f"internal error: {type(error).__name__}: {error}")
            raise
        if self.record.level_errors:
            failures = self.record.level_errors
            message = (
                f"{len(failures)} level(s) could not be measured; first: {failures[0].describe()}"
            )
            self._finish("failed", message)
            # A server that never started is exit 3, as when it was the only one.
            if any(failure.plan is None for failure in failures):
                raise ServerStartError(message)
            raise DriverError(message)
        self._finish("complete")
        return self.record

    def _finish(self, status: RunStatus, error: str | None = None) -> None:
        self.record.finish(status, error)
        self.export()

    async def _run_target(self, plan: TargetPlan, context: TargetContext, repeat: int) -> None:
        if self.columns is not None:
            await self.columns.run_column(self, plan, context, repeat)
        else:
            await self._run_every_level(plan, context, repeat)

    @asynccontextmanager
    async def open(self, plan: TargetPlan, context: TargetContext) -> AsyncIterator[Target]:
        """Open ``plan``'s target (start its server), said as events; the flow's
        ``teardown`` runs before it closes, unless Ctrl-C stopped the run."""
        self.events.server_starting(plan.label, starts=plan.server_kind is not None)
        async with plan.open(context) as target:
            interrupted = False
            try:
                yield target
            except asyncio.CancelledError:
                interrupted = True
                raise
            finally:
                if not interrupted:
                    await self.life.tear_down(target, self.security, self.check_site)

    async def _run_every_level(self, plan: TargetPlan, context: TargetContext, repeat: int) -> None:
        """One column; a server that cannot start is an error of that column only.

        With ``server_per_level`` every level gets a fresh server, so its peak
        memory is its own and not what earlier levels left behind."""
        levels = self.options.levels
        batches = [(level,) for level in levels] if self.options.server_per_level else [levels]
        for batch in batches:
            if all(self._reason_unavailable(level, plan.server_kind) for level in batch):
                # Not one level this kind can run: said without starting a server.
                for level in batch:
                    self._unavailable(plan.label, level, plan.server_kind, repeat)
                continue
            try:
                async with self.open(plan, context) as target:
                    await self.preflight(target, plan.server_kind is None)
                    alive = await self._run_levels(target, batch, repeat, plan.server_kind)
                    if not alive and not self.options.server_per_level:
                        return  # its other levels were skipped
            except ServerStartError as error:
                self.column_failed(plan.label, "", None, f"did not start: {error}")
                return

    async def preflight(self, target: Target, external: bool) -> None:
        """The target is ready; its TLS settings and the --call's schema for it, then one real call
        when grpcbench does not know the server's code (a --call, or an external
        target): a wrong method, missing credentials or a TLS mismatch stops the
        run here with one line (PreflightError), instead of measuring failures."""
        await self._preflight(target, external)
        # Said once the pre-flight call (which checks an external target answers) ended;
        # a ghz line checks nothing before its load (as ghz), so it says nothing.
        if not (external and self.options.ghz_line):
            self.events.server_ready(target.label, target.address, target.pid)

    async def _preflight(self, target: Target, external: bool) -> None:
        options = self.options
        self.security = target.security
        if options.call is not None:  # reflection, from where the load will come
            resolved = await self.check_site(
                resolve_call, options.call, target.address, self.security
            )
            self.method_call = MethodCall.from_json(resolved)
        # before the pre-flight call, whose flow may need setup()'s data
        await self.life.set_up(target, self.security, self.check_site)
        own_calls = options.call is not None or options.flow is not None
        if not (external or own_calls) or not options.preflight:
            return
        first = options.levels[0]
        spec = generator_job(
            options.settings, first, target.address, options.scenario.service,
            self.context.workload_params(first),
            self.method_call, self.security, self.life.flow,
        )  # fmt: skip
        what = (
            options.call.method if options.call
            else f"the workload {options.flow.function}" if options.flow
            else f"the {options.scenario.service} workload"
        )  # fmt: skip
        # Bounded here too: user code (a flow) that blocks the check's loop holds it
        # past every deadline of its own, or allocates without end (load.loop_watchdog
        # does this for generators).
        settings = options.settings
        limit = settings.timeout_s + settings.connect_timeout_s + settings.stall_limit_s
        await bounded(self.check_site(
            preflight_here, target.address, self.security, spec.to_json(), what,
            settings.timeout_s, options.expected_statuses, ClientOptions.of(settings),
        ), what, limit, settings.generator_memory_bytes)  # fmt: skip

    async def _run_levels(
        self, target: Target, levels: tuple[LevelPlan, ...], repeat: int, kind: str | None
    ) -> bool:
        """False when the target died (its other levels are skipped). A later level of a
        variant on the same server warms up less, alike for each driver (``model.warmup``)."""
        asked = Warmup.asked(self.options.settings)
        warmed: set[str] = set()  # the variants this server has served a level of
        for plan in levels:
            if self._unavailable(target.label, plan, kind, repeat):
                continue
            warmup = asked.on_warm_server(plan) if plan.variant in warmed else asked
            served = False
            for driver in self.drivers:
                try:
                    level = await self.measure(target, driver, plan, repeat, warmup=warmup)
                except DriverError as error:
                    # Often the server dying (a refused connect): then say that.
                    death = await death_of(target)
                    if death:
                        self._target_died(target, driver.name, plan, death)
                        return False
                    self.column_failed(target.label, driver.name, plan, str(error))
                    continue
                # The server died: that is the level's failure (its failed calls
                # only follow from it), and its other levels cannot run.
                death = target.failure()
                if death:
                    self._target_died(target, driver.name, plan, death)
                    return False
                # Measured, but (nearly) nothing worked: not a success (nor a warm server).
                failed = self.options.level_failure(level)
                if failed:
                    self.column_failed(target.label, driver.name, plan, failed)
                served = served or not failed
            if served:
                warmed.add(plan.variant)
        return True

    def _reason_unavailable(self, plan: LevelPlan, kind: str | None) -> str | None:
        """Why this server kind cannot run the level (a variant it lacks), or None."""
        check = self.service.unavailable
        if not check or not kind:
            return None
        # Asked of the servicers it runs: a grpcio variant lacks what grpcio's lack.
        return check(KINDS[kind].servicer_kind, self.options.workload_params(plan))

    def _unavailable(self, label: str, plan: LevelPlan, kind: str | None, repeat: int) -> bool:
        """A level this server kind cannot run is reported as such, never run as another."""
        reason = self._reason_unavailable(plan, kind)
        if reason is None:
            return False
        if repeat == 0:
            entry = LevelError(label, "", plan, reason)
            self.record.unavailable.append(entry)
            self.export()
            self.events.warning(entry.describe())
        return True

    def _target_died(self, target: Target, driver: str, plan: LevelPlan, death: str) -> None:
        skipped = "" if self.options.server_per_level else "; its other levels were skipped"
        self.column_failed(target.label, driver, plan, death + skipped)

    def column_failed(self, label: str, driver: str, plan: LevelPlan | None, message: str) -> None:
        """A level (or, ``plan`` None, a whole column) that failed: recorded, said."""
        error = LevelError(label, driver, plan, message)
        self.record.level_errors.append(error)
        self.export()
        self.events.warning(error.describe())

    async def measure(
        self, target: Target, driver: LoadDriver, plan: LevelPlan, repeat: int = 0,
        label: str = "", warmup: Warmup | None = None,
    ) -> LevelResult:  # fmt: skip
        """Measure one level on ``target`` and add it to the record (written at once):
        ``label`` names it in progress (default: the plan's name); ``warmup``: its own
        (default: the run's --warmup)."""
        options = self.options
        # total is 0 for time-based levels: the progress bar is then indeterminate.
        self.events.level_started(
            target.label, driver.name, label or plan.describe(), options.settings.requests
        )
        try:
            level = await self.context.measure_level(
                driver,
                target,
                plan,
                repeat=repeat,
                call=self.method_call,
                security=self.security,
                flow=self.life.flow,
                warmup=warmup,
            )
        except LevelInterrupted as interrupted:  # measured, then Ctrl-C: keep it, then stop
            self._keep(interrupted.level)
            raise asyncio.CancelledError from None
        self._keep(level)
        return level

    def _keep(self, level: LevelResult) -> None:
        self.record.levels.append(level)
        self.export()
        self.events.level_finished(level)
