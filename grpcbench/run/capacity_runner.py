"""Drives the search on every server kind: ceiling probe, search, confirmation.

``CapacitySearch`` is what a ``Runner`` does with each column in ``capacity``
(``runner.Columns``): the same runner as `run` (its RunContext, preparation,
pre-flight, target plans and drivers) composed with the search, through the
runner's public steps (open, preflight, measure, column_failed). For each column, one
server for a closed-loop probe that estimates the ceiling and the search's
open-loop probes (every SLO's search reuses a rate already probed; a miss far below
the closed loop's rate is measured once more), then each
capacity confirmed ``confirmations`` times, each on a fresh server (a rate's
confirmations stop at its first miss and the next rate down is tried). Every
probe is a level of the run's record, exported as it ends, so Ctrl-C keeps
what was measured.
"""

from __future__ import annotations

from dataclasses import replace

from grpcbench.base.errors import DriverError, ServerStartError, UsageError
from grpcbench.capacity.probe import Judgement, judge
from grpcbench.capacity.record import (
    STEP_DOWNS,
    CapacityRecord,
    CapacitySettings,
    Found,
    Phase,
    Probe,
)
from grpcbench.capacity.search import RateSearch, round_rate
from grpcbench.capacity.slo import Slo
from grpcbench.load.catalogue import (
    able_drivers,
    check_features,
    driver_info,
    load_model_features,
)
from grpcbench.model.events import RunEvents
from grpcbench.model.plan import LevelPlan
from grpcbench.model.results import LevelResult, RunRecord
from grpcbench.run.options import RunOptions
from grpcbench.run.runner import Runner
from grpcbench.run.settle import LIMIT_S, wait_until_idle
from grpcbench.targets import Target, TargetContext, TargetPlan
from grpcbench.targets.base import death_of
from grpcbench.targets.external import ExternalTarget

# A search probe that fails at most this share of the closed-loop estimate is measured
# again once before it bounds the search (see _search).
RETRY_BELOW = 0.75


class TargetDied(Exception):
    """The server under search stopped; its column ends."""


def probe_options(options: RunOptions, settings: CapacitySettings) -> RunOptions:
    """`run`'s options with every level a probe: time-based, a warm-up in time, one pass."""
    load = replace(
        options.settings, requests=0, duration_s=settings.probe_duration_s, warmup_requests=0,
        warmup_s=settings.probe_warmup_s,
    )  # fmt: skip
    return replace(options, settings=load, repeat=1, server_per_level=False)


def check_capacity_options(options: RunOptions) -> None:
    """What a search cannot do, refused before anything starts."""
    if len(options.drivers) != 1:
        able = " or ".join(able_drivers("open_loop"))
        raise UsageError(f"capacity searches with one driver: give --load {able}")
    if not driver_info(options.drivers[0]).able("open_loop"):
        raise UsageError(
            f"capacity probes open loops, which the {options.drivers[0]} driver cannot run:"
            f" use --load {' or '.join(able_drivers('open_loop'))}"
        )
    check_features(options.drivers, load_model_features(True, options.settings.connections))
    variants = {plan.variant for plan in options.levels}
    if len(variants) > 1:
        raise UsageError(
            f"capacity searches one workload variant at a time ({', '.join(sorted(variants))}):"
            " give --variants NAME"
        )
    if any(plan.channels for plan in options.levels):
        raise UsageError("capacity does not sweep --channels: give --connections pool:N")
    if options.settings.rate_schedule is not None:
        raise UsageError("capacity chooses its probes' rates: drop --rate-schedule")
    if options.scenario.level_scenarios:
        raise UsageError(
            "capacity searches one rate; the scenario file's [[scenarios]] set their own: run"
            " them with grpcbench run"
        )


class CapacitySearch:
    """The search's state and steps for every column of one ``capacity`` run."""

    def __init__(self, options: RunOptions, settings: CapacitySettings) -> None:
        check_capacity_options(options)
        self.options = probe_options(options, settings)  # the runner's options
        self.settings = settings
        self.capacity = CapacityRecord(settings)
        # (server, rate) -> the levels of its confirmations, shared by the SLOs.
        self._confirmations: dict[tuple[str, float], list[int] | None] = {}
        # Every level asked for shares its variant and connection; take them from one.
        template = options.levels[-1]
        # The closed-loop probe runs at the highest concurrency asked for (the ceiling).
        highest = max(p.concurrency for p in options.levels)
        self.ceiling_plan = replace(template, concurrency=highest)
        self.open_plan = LevelPlan(
            options.settings.max_in_flight, 0, 0.0, template.variant, template.connection
        )
        self._runner: Runner | None = None

    def runner(self, events: RunEvents | None = None) -> Runner:
        """The runner that runs this search on every column (made once)."""
        if self._runner is None:
            self._runner = Runner(self.options, events, columns=self)
        return self._runner

    @property
    def run(self) -> Runner:
        assert self._runner is not None, "make the runner first: CapacitySearch.runner()"
        return self._runner

    @property
    def record(self) -> RunRecord:
        return self.run.record

    def annotate(self, record: RunRecord) -> None:
        record.capacity = self.capacity.to_json()

    def export(self) -> None:
        self.run.export()

    async def run_column(
        self, runner: Runner, plan: TargetPlan, context: TargetContext, repeat: int
    ) -> None:
        searches: dict[str, RateSearch] = {}
        try:
            async with runner.open(plan, context) as target:
                searches = await self._search(target)
        except ServerStartError as error:
            self._column_failed(plan.label, f"did not start: {error}")
            return
        except TargetDied as died:
            self._column_failed(plan.label, str(died), self.open_plan)
        for slo in self.settings.slos:
            search = searches.get(slo.text)
            if search is None:
                continue
            confirmed = None
            if search.passed and self.settings.confirmations:
                confirmed = await self._confirmed_rate(plan, context, slo, search.passed)
            self.capacity.found.append(
                Found(
                    server=plan.label, slo=slo.text, capacity=search.passed,
                    end=search.describe_end(), converged=search.converged,
                    generator_limited=search.generator_limit is not None,
                    confirmed=confirmed,
                )
            )  # fmt: skip
            self.export()
            self.run.events.capacity_found(plan.label, slo.text, search.passed, confirmed)
        self._hold_slos_in_order(plan.label)
        self._credit_shared_confirmations(plan.label)

    def _hold_slos_in_order(self, server: str) -> None:
        """A looser SLO is credited at least a tighter one's capacity on ``server``: the
        tighter one's passing probes pass it too. Each search probes its own rates, so on
        a contended machine the looser one can miss a rate below the tighter one's
        (p99<=2s at 180/s beside p99<=50ms at 191/s): its end then says the probes
        disagree, as a figure that contention makes unreliable."""
        slos = {slo.text: slo for slo in self.settings.slos}
        mine = [(i, f) for i, f in enumerate(self.capacity.found) if f.server == server]
        for position, loose in mine:
            tighter = [
                f for _, f in mine
                if f is not loose and f.capacity is not None
                and slos[f.slo].implies(slos[loose.slo])
                and f.capacity > (loose.capacity or 0.0)
            ]  # fmt: skip
            if not tighter:
                continue
            best = max(tighter, key=lambda f: f.capacity or 0.0)
            self.capacity.found[position] = replace(
                loose,
                capacity=best.capacity,
                end=f"{loose.end}; raised to {best.capacity:g}/s, where {best.slo} passed (its"
                " probes pass this SLO too): the two searches disagree, as on a contended"
                " machine, so treat both as unreliable",
            )
            at = next(i for i, f in mine if f is best)
            now = self.capacity.found[at]  # as raised itself, when it was looser than another
            self.capacity.found[at] = replace(
                now, end=f"{now.end}; {loose.slo}'s search missed below this rate: unreliable"
            )
            self.export()
            self.run.events.capacity_found(server, loose.slo, best.capacity, loose.confirmed)

    def _credit_shared_confirmations(self, server: str) -> None:
        """Raise each SLO's confirmed rate on ``server`` to the highest rate, up to its
        search's capacity, whose full set of confirmations passed it, whichever SLO
        ran them. The SLOs confirm one after another: a loose SLO whose knee-top rate
        missed steps down before a tight one confirms a higher rate on probes that pass
        the loose SLO too (p99<=2s at 192/s beside p99<=25ms at 196/s)."""
        for position, found in enumerate(self.capacity.found):
            if found.server != server or found.capacity is None:
                continue
            slo = next(s for s in self.settings.slos if s.text == found.slo)
            full = [
                rate
                for (label, rate), levels in self._confirmations.items()
                if label == server and rate <= found.capacity and self._confirmed(levels, slo)
            ]
            best = max(full, default=None)
            if best is not None and (found.confirmed is None or best > found.confirmed):
                self.capacity.found[position] = replace(found, confirmed=best)
                self.export()
                self.run.events.capacity_found(server, found.slo, found.capacity, best)

    async def _confirmed_rate(
        self, plan: TargetPlan, context: TargetContext, slo: Slo, rate: float
    ) -> float | None:
        """The highest rate, from the search's capacity down, that passed every
        confirmation: a rate on the server's knee passes some fresh servers and not
        others, so each miss steps down (at most ``STEP_DOWNS`` times; see _below)."""
        for _ in range(STEP_DOWNS + 1):
            levels = await self._confirmations_at(plan, context, rate, slo)
            if levels is None:  # a server did not start or died
                return None
            if self._confirmed(levels, slo):
                return rate
            rate = self._below(plan.label, slo, rate)
        return None

    def _below(self, server: str, slo: Slo, missed: float) -> float:
        """The rate to confirm after ``missed`` failed a confirmation: ``precision``
        below it, or the highest rate in between that every probe on ``server``
        passed ``slo`` at (another SLO's search or confirmations measured it). Without
        them a loose SLO stepping down from its knee lands below the rate a tight SLO
        confirmed on the same server (p99<=2s at 192/s beside p99<=25ms at 196/s)."""
        floor = round_rate(missed * (1 - self.settings.precision))
        outcomes: dict[float, list[bool]] = {}
        for probe in self.capacity.probes:
            if probe.server == server and floor < probe.rate < missed:
                judgement = self._judge(self.record.levels[probe.level], slo)
                outcomes.setdefault(probe.rate, []).append(judgement.outcome == "pass")
        known = [rate for rate, passed in outcomes.items() if all(passed)]
        return max(known, default=floor)

    def _confirmed(self, levels: list[int] | None, slo: Slo) -> bool:
        """A rate's confirmations are complete and every one passed ``slo``."""
        return (
            levels is not None
            and len(levels) == self.settings.confirmations
            and self._all_pass(levels, slo)
        )

    def _all_pass(self, levels: list[int], slo: Slo) -> bool:
        return all(self._probe_at(i).judgements[slo.text].outcome == "pass" for i in levels)

    async def _confirmations_at(
        self, plan: TargetPlan, context: TargetContext, rate: float, slo: Slo
    ) -> list[int] | None:
        """The confirmations at ``rate``, run one fresh server at a time until
        ``confirmations`` passed ``slo`` or one missed it: a miss settles that the rate
        is not confirmed, and more runs there would only spend the search's time.
        They are shared by the SLOs (judged for each) and extended when another SLO
        needs more of them; None when a server did not start or died."""
        key = (plan.label, rate)
        levels = self._confirmations.get(key, [])
        while levels is not None and len(levels) < self.settings.confirmations:
            if not self._all_pass(levels, slo):
                break
            index = await self._confirm(plan, context, rate, run=len(levels) + 1)
            levels = None if index is None else [*levels, index]
            self._confirmations[key] = levels
        return levels

    def _probe_at(self, index: int) -> Probe:
        return next(p for p in self.capacity.probes if p.level == index)

    async def _search(self, target: Target) -> dict[str, RateSearch]:
        await self.run.preflight(target, external=isinstance(target, ExternalTarget))
        ceiling_index = await self._probe(target, self.ceiling_plan, "ceiling")
        ceiling = self.record.levels[ceiling_index]
        # What the server answered as expected: a server that refuses most calls fast
        # (a rate limiter) must not make the search start at its refusal rate.
        served = ceiling.measured.count - ceiling.unexpected
        estimate = served / ceiling.measured.wall_s if ceiling.measured.wall_s else 0.0
        # Judged by no SLO, but shown in the probes table: exported too.
        number = self._number(self._probe_at(ceiling_index))
        self.run.events.probe_judged(target.label, number, "ceiling", estimate, "", "estimate")
        probed: dict[float, int] = {}  # rate -> its level's index
        retried: set[float] = set()
        searches: dict[str, RateSearch] = {}
        for slo in self.settings.slos:
            search = searches[slo.text] = RateSearch(
                estimate / 2, self.settings.precision, self.settings.max_probes
            )
            while (rate := search.next_rate()) is not None:
                index = probed.get(rate)
                if index is None:
                    index = probed[rate] = await self._search_probe(target, rate)
                judgement = self._judged(index, slo)
                if (
                    judgement.outcome in ("fail", "generator")
                    and rate <= RETRY_BELOW * estimate
                    and rate not in retried
                ):
                    # The closed loop served this rate with room to spare, and its
                    # generator offered more than this: a miss here (or late sends) is
                    # as likely a stall (a fresh server's one-off pause, a noisy
                    # neighbour, a contended host's wake-ups) as the server's capacity or
                    # the generator's, and it would end the whole search. It is measured
                    # once more, and the second one counts.
                    retried.add(rate)
                    index = probed[rate] = await self._search_probe(target, rate)
                    judgement = self._judged(index, slo)
                search.record(rate, judgement.outcome, judgement.host_stalled)
        return searches

    async def _search_probe(self, target: Target, rate: float) -> int:
        await self._settle(target)
        return await self._probe(target, replace(self.open_plan, rate=rate), "search")

    async def _settle(self, target: Target) -> None:
        """The server idle again before the next probe on it (run.settle); a
        target without a pid to watch is probed at once."""
        if target.pid is None:
            return
        _, idle = await wait_until_idle(target.pid)
        if not idle:
            self.run.events.warning(
                f"{target.label}: still busy {LIMIT_S:g} s after the last probe (a backlog"
                " it has not drained); probing anyway"
            )

    async def _confirm(
        self, plan: TargetPlan, context: TargetContext, rate: float, run: int
    ) -> int | None:
        """One probe at ``rate`` on a fresh server, judged for every SLO: its level's
        index (None when the server failed)."""
        try:
            async with self.run.open(plan, context) as target:
                await self.run.preflight(target, external=isinstance(target, ExternalTarget))
                index = await self._probe(
                    target, replace(self.open_plan, rate=rate), "confirm", repeat=run
                )
        except ServerStartError as error:
            self._column_failed(plan.label, f"confirmation at {rate:g}/s: did not start: {error}")
            return None
        except TargetDied as died:
            self._column_failed(plan.label, f"confirmation at {rate:g}/s: {died}", self.open_plan)
            return None
        for slo in self.settings.slos:
            self._judged(index, slo)
        return index

    async def _probe(self, target: Target, plan: LevelPlan, phase: Phase, repeat: int = 0) -> int:
        """Measure one probe on ``target``; its index among the record's levels."""
        runner = self.run
        try:
            await runner.measure(
                target, runner.drivers[0], plan, repeat, label=f"{phase} {plan.describe()}"
            )
        except DriverError as error:
            death = await death_of(target)  # often the server dying: then say that
            raise TargetDied(death or f"{phase} probe at {plan.describe()}: {error}") from None
        index = len(self.record.levels) - 1
        self.capacity.probes.append(Probe(index, target.label, phase, plan.rate))
        self.export()
        failure = target.failure()
        if failure:
            raise TargetDied(failure)
        return index

    def _judge(self, level: LevelResult, slo: Slo) -> Judgement:
        return judge(level, slo, self.settings.max_error_rate, self.settings.probe_duration_s)

    def _judged(self, index: int, slo: Slo) -> Judgement:
        """Judge level ``index`` for ``slo`` and attach the verdict to its probe."""
        judgement = self._judge(self.record.levels[index], slo)
        probe = self._probe_at(index)
        probe.judgements[slo.text] = judgement
        self.export()
        self.run.events.probe_judged(probe.server, self._number(probe), probe.phase, probe.rate,
                                     slo.text, judgement.outcome)  # fmt: skip
        return judgement

    def _number(self, probe: Probe) -> int:
        """The probe's number on its server, as the probes table numbers it."""
        return self.capacity.server_probes(probe.server).index(probe) + 1

    def _column_failed(self, label: str, message: str, plan: LevelPlan | None = None) -> None:
        """A column that could not finish (``plan`` None: its server never started)."""
        self.run.column_failed(label, self.run.drivers[0].name, plan, message)
