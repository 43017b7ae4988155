"""``RunOptions``: every choice of a run, validated, frozen, and saved with its results.

The command line only collects raw values into ``RunArgs``; each option parses and
checks itself by its declaration (``RunArgs.value``), and each rule that spans
several options sits with its subsystem: the scenario (``run.scenario_choice``),
levels and load settings (``run.levels``), targets (``targets.choice``), placement
(``model.placement``), drivers (``load.catalogue``, ``load.cluster_checks``), live
telemetry (``telemetry.checks``) and outputs (``report.exporters``).
``build_run_options`` composes them into ``RunOptions`` (one clear ``UsageError``
per bad value), so the runner never sees raw input.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from grpcbench.base import defaults
from grpcbench.base.declarations import read_files
from grpcbench.base.errors import UsageError
from grpcbench.base.output_files import is_file
from grpcbench.history.options import StoreTarget
from grpcbench.load.allocations import check_available
from grpcbench.load.catalogue import (
    check_features,
    check_generator_here,
    check_workload,
    load_model_features,
)
from grpcbench.load.cluster_checks import check_secrets_stay_encrypted, cluster_drivers
from grpcbench.load.driver import DriverSettings
from grpcbench.model.call_details import DETAIL_LIMIT
from grpcbench.model.placement import Placement, build_placement, resolve_client_processes
from grpcbench.model.plan import LevelPlan, LoadSettings
from grpcbench.model.results import LevelResult
from grpcbench.model.scenario import Scenario
from grpcbench.model.thresholds import Threshold
from grpcbench.profile.model import ProfileSettings
from grpcbench.report.exporters import Output, check_outputs_apart, outputs_from
from grpcbench.rpc.flow import PlannedFlow
from grpcbench.rpc.planned import PlannedCall, plan_call, plan_flow
from grpcbench.rpc.security import PLAINTEXT, ChannelSecurity
from grpcbench.run.arguments import RunArgs
from grpcbench.run.ghz_compat import is_ghz_line
from grpcbench.run.levels import level_plans, load_settings
from grpcbench.run.scenario_choice import resolve_scenario
from grpcbench.servers.spec import check_served
from grpcbench.services.base import ServiceDefinition
from grpcbench.services.params import secret_names
from grpcbench.targets import TargetPlan
from grpcbench.targets.choice import LOCALHOST, target_address, target_plans
from grpcbench.telemetry.checks import check_live_telemetry


@dataclass(frozen=True)
class RunOptions:
    scenario: Scenario  # with --server-param/--workload-param applied
    targets: tuple[TargetPlan, ...]  # the columns: servers to start, or an external target
    levels: tuple[LevelPlan, ...]  # every level of a column, in the order they run
    settings: LoadSettings  # the load settings of every level
    drivers: tuple[str, ...]
    driver_settings: DriverSettings
    placement: Placement
    outputs: tuple[Output, ...] = ()
    repeat: int = defaults.REPEAT  # every level this many times, in fresh server processes
    port: int = defaults.PORT
    start_timeout_s: float = defaults.START_TIMEOUT_S
    server_per_level: bool = False  # a fresh server process for every level
    call: PlannedCall | None = None  # --call: a method call instead of the service's workload
    flow: PlannedFlow | None = None  # --workload: the user's flow instead of either
    security: ChannelSecurity = PLAINTEXT  # how the client reaches the target
    max_error_rate: float | None = None  # None: a level fails when every call failed
    secret_params: frozenset[str] = frozenset()  # declared secret: masked when shown or saved
    bind: str = LOCALHOST  # where the servers grpcbench starts listen (--bind)
    # Statuses that count as success (--expect-status): an error path benchmarked on purpose.
    expected_statuses: tuple[str, ...] = ("OK",)
    preflight: bool = True  # one real call before the first level (--no-preflight: none)
    # A ghz command line (run.ghz_compat.is_ghz_line): as ghz, no pre-flight call and no
    # connection only to check the server answers; a level that fails measures the failures.
    ghz_line: bool = False
    name: str = ""  # --name: the run's name, recorded and shown
    tags: Mapping[str, str] = field(default_factory=dict)  # --tags
    thresholds: tuple[Threshold, ...] = ()  # --threshold: checked on every level (exit 99)
    profile: ProfileSettings | None = None  # --profile: py-spy on every server it starts
    store: StoreTarget | None = None  # --store: where the finished run is kept

    def level_failure(self, level: LevelResult) -> str | None:
        """Why a measured level does not count as a success, if it does not."""
        statuses = level.measured.statuses
        count = sum(statuses.values())
        failed = level.unexpected
        listed = ", ".join(f"{k} {v}" for k, v in sorted(statuses.items())) or "no call finished"
        if count == 0 or failed == count:
            if self.expected_statuses != ("OK",):
                expected = ", ".join(self.expected_statuses)
                return f"none of {count} calls ended {expected} (--expect-status): {listed}"
            hint = (
                "; ResourceExhausted: a message over a size limit, such as a reply over"
                " --max-recv-message-size (4 MiB, grpc's, unless given)"
                if "ResourceExhausted" in statuses else ""
            )  # fmt: skip
            return f"all {count} calls failed ({listed}){hint}"
        if self.max_error_rate is not None and failed / count > self.max_error_rate:
            return (
                f"{failed} of {count} calls failed ({failed / count:.1%}, over --max-error-rate"
                f" {self.max_error_rate:g}: {listed})"
            )
        return None

    def workload_params(self, plan: LevelPlan) -> dict[str, Any]:
        """The scenario's workload params, overridden by the level's variant."""
        params = dict(self.scenario.workload_params)
        for variant in self.scenario.variants:
            if variant.name == plan.variant:
                params.update(variant.params)
        return params

    @property
    def column_labels(self) -> tuple[str, ...]:
        return tuple(target.label for target in self.targets)


def describe_mix(call: PlannedCall) -> str:
    """A mix's title: its methods and weights, "mix Say:3 + Expand:1"."""
    return "mix " + " + ".join(
        f"{(part.label or part.method).rpartition('/')[2]}:{part.weight}" for part in call.mix
    )


def build_run_options(args: RunArgs) -> RunOptions:
    """Every option checked, before anything starts."""
    outputs = outputs_from(
        args.exports, json=args.output, markdown=args.markdown, csv=args.csv, html=args.report
    )
    read = read_files(args)
    if is_file(Path(args.scenario)):  # a scenario file, not a bundled scenario's name
        read.append(("--scenario", Path(args.scenario)))
    debug = Path(args.ghz_flags.debug) if args.ghz_flags.debug else None
    check_outputs_apart(outputs, read, debug)  # before any input is read
    scenario, service = resolve_scenario(args)
    call_settings = args.call.settings().over(scenario.call)
    if args.insecure and call_settings.security.tls:
        raise UsageError(
            "--insecure (plaintext) contradicts the TLS options (--cacert, --cert, --key,"
            " --cname, --skipTLS or the scenario's [tls])"
        )
    flow = plan_flow(args.workload, call_settings) if args.workload else None
    call = None if flow else plan_call(call_settings)
    if call is not None and args.name:
        call = replace(call, worker_prefix=args.name)  # ghz's {{.WorkerID}}: "NAME:g0c0"
    if flow is not None:
        scenario = replace(scenario, name=f"workload {flow.function}")
    if call is not None and not scenario.call.method:
        # The tables are about the method called, not the scenario it replaced.
        scenario = replace(scenario, name=describe_mix(call) if call.mix else call.method)
    if scenario.level_scenarios and (
        args.call.call or call is None or len(call.mix) != len(scenario.level_scenarios)
    ):
        given = "--workload" if flow else "--call"
        raise UsageError(f"the scenario file's [[scenarios]] each name their method: drop {given}")
    max_error_rate = args.value("max_error_rate")
    load = load_settings(args, scenario)
    cluster = args.value("cluster")
    drivers = cluster_drivers(args.value("load"), cluster, args.cluster_workers)
    if call is not None and call.feed_mode == "once" and load.warmup_s:
        raise UsageError(
            "--feed once sends each line once: a timed --warmup could use them all; give"
            " warm-up calls as a count (--warmup 100) or none (--warmup 0)"
        )
    check_features(
        drivers,
        {
            **load_model_features(
                bool(
                    args.rate or load.rate_schedule or any(s.rate for s in scenario.level_scenarios)
                ),
                load.connections,
            ),
            "feeder": call is not None and bool(call.feed_path),
            "flow": flow is not None,
            "stream_round_trip": call is not None and call.stream_round_trip,
            "mix": call is not None and bool(call.mix) and not scenario.level_scenarios,
            "scenarios": bool(scenario.level_scenarios),
            "worker_schedule": load.worker_schedule is not None,
            "think_time": load.think_time is not None,
        },
    )
    placement = build_placement(args.pin, args.server_cpus, args.client_cpus, args.backing_cpus)
    if check_live_telemetry(args.prometheus, args.otlp, args.otlp_headers):
        # Live figures arrive interval by interval.
        load = replace(load, interval_s=load.interval_s or 1.0)
    load = replace(
        load,
        client_cpus=placement.client_cpus,
        # ghz's per-call formats need each call's record, kept up to ghz's limit.
        call_details=DETAIL_LIMIT if any(out.info.lists_calls for out in outputs) else 0,
    )
    targets = target_plans(
        target_address(args.target, args.address), args.servers, args.target_pid, scenario.servers
    )
    if not any(target.server_kind for target in targets):
        # A running target runs where it runs: nothing pins it, and the header says so.
        placement = replace(placement, server_cpus=())
    options = RunOptions(
        scenario=scenario,
        targets=targets,
        levels=level_plans(args, scenario, load),
        settings=load,
        drivers=drivers,
        driver_settings=DriverSettings(
            client_processes=_client_processes(args, load, placement),
            ghz=args.ghz,
            cluster=cluster,
            cluster_workers=args.cluster_workers,
            keep_generators=True,  # the runner closes its drivers at the run's end
        ),
        placement=placement,
        outputs=outputs,
        repeat=args.value("repeat"),
        port=args.value("port"),
        start_timeout_s=(
            args.value("start_timeout") if args.start_timeout else defaults.START_TIMEOUT_S
        ),
        server_per_level=(
            scenario.server_per_level if args.server_per_level is None else args.server_per_level
        ),
        call=call,
        flow=flow,
        security=call_settings.security,
        max_error_rate=max_error_rate,
        secret_params=secret_names(service.server_params, service.workload_params),
        bind=args.value("bind") or LOCALHOST,
        expected_statuses=args.value("expect_status") or ("OK",),
        preflight=args.preflight and not is_ghz_line(args),
        ghz_line=is_ghz_line(args),
        name=args.name,
        tags=dict(args.tags),
        thresholds=args.value("thresholds"),
        store=StoreTarget.of(args.store),
        profile=ProfileSettings.beside(
            args.output, args.value("profile_rate"), args.profile_native, args.profile_idle,
            args.profile_generator,
        ) if args.profile else None,
    )  # fmt: skip
    _check_service(options, service)
    _check_threshold_scenarios(options)
    if options.profile and options.profile.generator:
        check_generator_here(
            drivers, "--profile generator", "samples the built-in generator's processes"
        )
    if options.settings.client_allocations:
        check_generator_here(
            drivers, "--client-allocations", "traces the built-in generator's calls"
        )
        check_available()
    _check_workloads(options, service)
    check_secrets_stay_encrypted(
        options.driver_settings.cluster or "", _secrets_sent(options), args.allow_plaintext_secrets
    )
    return options


def _client_processes(args: RunArgs, load: LoadSettings, placement: Placement) -> int:
    """Generator processes per level; one runs a worker schedule (its workers are one
    numbered set, as ghz's are)."""
    given = args.value("client_processes")
    if load.worker_schedule is not None:
        if given not in (None, 1):
            raise UsageError(
                f"--worker-schedule runs in one generator process: drop --client-processes"
                f" {given} (ghz's --cpus)"
            )
        return 1
    return resolve_client_processes(given, placement)


def _has_setup(flow: PlannedFlow) -> bool:
    from grpcbench.rpc.setup_teardown import hooks_of

    return "setup" in hooks_of(flow.function)


def _secrets_sent(options: RunOptions) -> list[str]:
    """What a cluster's workers would be sent that may be a secret, in words."""
    call, flow = options.call, options.flow
    calls = (call.mix or (call,)) if call is not None else ()
    given = [
        *(("the metadata (-m/-M)", json.loads(part.metadata or "{}")) for part in calls),
        ("the metadata (-m/-M)", flow is not None and json.loads(flow.metadata or "{}")),
        ("what the workload's setup() returns", flow is not None and _has_setup(flow)),
        ("--reflect-metadata", call is not None and json.loads(call.reflect_metadata or "{}")),
        ("the client key (--key)", options.security.key),
    ]
    return list(dict.fromkeys(words for words, present in given if present))


def _check_threshold_scenarios(options: RunOptions) -> None:
    """A threshold on one scenario (``p99{scenario:NAME}<10ms``) names one that runs."""
    names = [scenario.name for scenario in options.scenario.level_scenarios]
    for threshold in options.thresholds:
        wanted = threshold.bound.scenario
        if wanted is not None and wanted not in names:
            known = ", ".join(names) or "none: this run has no [[scenarios]]"
            raise UsageError(
                f"--threshold {threshold.text}: no scenario {wanted!r} (scenarios: {known})"
            )


def _check_service(options: RunOptions, service: ServiceDefinition) -> None:
    """The service serves every kind asked for, and something makes the requests."""
    started = [t.server_kind for t in options.targets if t.server_kind]
    if started and options.security.tls:
        raise UsageError(
            "the TLS options (--cacert, --cert, --key, --cname, --skipTLS) are for --target:"
            " the servers grpcbench starts speak plaintext"
        )
    if started and not service.name:
        raise UsageError(
            f"scenario {options.scenario.name} names no service to serve: give --target"
            " HOST:PORT, or --service module:ATTRIBUTE with your servicers"
        )
    for kind in started:
        check_served(service, kind)
    if options.call is None and options.flow is None and service.workload is None:
        raise UsageError(
            f"service {service.name or '(none)'} has no client workload: give --call"
            " package.Service/Method (and -d JSON)"
        )


def _check_workloads(options: RunOptions, service: ServiceDefinition) -> None:
    """Every driver and every level's workload checked now, not when the level is reached."""
    if not options.targets or not options.levels:
        raise UsageError("nothing to run: no server and no level")
    for plan in options.levels:
        params = options.workload_params(plan)
        for name in options.drivers:  # e.g. ghz cannot follow page tokens: say so now
            if options.call is None and options.flow is None:  # a --call, a flow: checked
                check_workload(name, options.scenario.service, params)
        if service.check_level and any(t.target_type == "server" for t in options.targets):
            service.check_level(options.scenario.server_params, params, plan.concurrency)
