"""``RunOptions``: every choice of a run, validated, frozen, and saved with its results.

The command line only collects raw values into ``RunArgs``; ``build_run_options``
turns them into ``RunOptions`` (one clear ``UsageError`` per bad value), so the
runner never sees raw input. The defaults come from ``defaults``.
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import psutil

from grpcbench.base import defaults
from grpcbench.base.declarations import parse_values
from grpcbench.base.errors import OneLineError, UsageError
from grpcbench.base.parsing import (
    ENCRYPTED_CLUSTER_SCHEMES,
    parse_cluster,
    parse_cpu_set,
    parse_duration,
    parse_host_port,
    parse_params,
    parse_positive_float_list,
    parse_positive_int_list,
)
from grpcbench.base.secrets import mask_params, redact
from grpcbench.load.allocations import check_available
from grpcbench.load.catalogue import (
    check_features,
    check_workload,
    load_model_features,
    on_cluster,
    parse_drivers,
    runs_here,
)
from grpcbench.load.driver import DriverSettings
from grpcbench.model.call_details import DETAIL_LIMIT
from grpcbench.model.plan import NO_TIMEOUT, LevelPlan, LoadSettings, Placement
from grpcbench.model.results import LevelResult, RecordedOptions
from grpcbench.model.scenario import Scenario, Variant, load_scenario
from grpcbench.model.thresholds import Threshold, parse_threshold
from grpcbench.profile.model import ProfileSettings
from grpcbench.report.exporters import Output, outputs_from
from grpcbench.rpc.flow import FlowSpec
from grpcbench.rpc.planned import PlannedCall, plan_call, plan_flow
from grpcbench.rpc.security import PLAINTEXT, ChannelSecurity
from grpcbench.rpc.status_names import parse_statuses
from grpcbench.run.arguments import RunArgs
from grpcbench.servers.spec import check_served, parse_server_specs
from grpcbench.services.base import ServiceDefinition
from grpcbench.services.params import check_params, secret_names
from grpcbench.services.registry import load_service
from grpcbench.targets import TargetPlan, make_target_plan

LOCALHOST = "127.0.0.1"


@dataclass(frozen=True)
class RunOptions:
    scenario: Scenario  # with --server-param/--workload-param applied
    targets: tuple[TargetPlan, ...]  # the columns: servers to start, or an external target
    levels: tuple[LevelPlan, ...]  # every level of a column, in the order they run
    load: LoadSettings
    drivers: tuple[str, ...]
    driver_settings: DriverSettings
    placement: Placement
    outputs: tuple[Output, ...] = ()
    repeat: int = defaults.REPEAT  # every level this many times, in fresh server processes
    port: int = defaults.PORT
    start_timeout_s: float = defaults.START_TIMEOUT_S
    server_per_level: bool = False  # a fresh server process for every level
    call: PlannedCall | None = None  # --call: a method call instead of the service's workload
    flow: FlowSpec | None = None  # --workload: the user's flow instead of either
    security: ChannelSecurity = PLAINTEXT  # how the client reaches the target
    max_error_rate: float | None = None  # None: a level fails when every call failed
    secret_params: frozenset[str] = frozenset()  # declared secret: masked when shown or saved
    bind: str = LOCALHOST  # where the servers grpcbench starts listen (--bind)
    # Statuses that count as success (--expect-status): an error path benchmarked on purpose.
    expected_statuses: tuple[str, ...] = ("OK",)
    preflight: bool = True  # one real call before the first level (--no-preflight: none)
    name: str = ""  # --name: the run's name, recorded and shown
    tags: Mapping[str, str] = field(default_factory=dict)  # --tags
    thresholds: tuple[Threshold, ...] = ()  # --threshold: checked on every level (exit 99)
    profile: ProfileSettings | None = None  # --profile: py-spy on every server it starts

    def level_failure(self, level: LevelResult) -> str | None:
        """Why a measured level does not count as a success, if it does not."""
        statuses = level.load.statuses
        count = sum(statuses.values())
        failed = level.unexpected
        listed = ", ".join(f"{k} {v}" for k, v in sorted(statuses.items())) or "no call finished"
        if count == 0 or failed == count:
            if self.expected_statuses != ("OK",):
                expected = ", ".join(self.expected_statuses)
                return f"none of {count} calls ended {expected} (--expect-status): {listed}"
            return f"all {count} calls failed ({listed})"
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

    def recorded(self) -> RecordedOptions:
        """What is saved with the results."""
        return RecordedOptions(
            scenario=self.scenario.name,
            service=self.scenario.service,
            server_params=mask_params(dict(self.scenario.server_params), self.secret_params),
            workload_params=mask_params(dict(self.scenario.workload_params), self.secret_params),
            targets=self.column_labels,
            drivers=self.drivers,
            levels=self.levels,
            load=self.load,
            placement=self.placement,
            client_processes=self.driver_settings.client_processes,
            repeat=self.repeat,
            call=self._recorded_call(),
            name=self.name,
            tags=dict(self.tags),
            thresholds=tuple(t.text for t in self.thresholds),
        )

    def _recorded_call(self) -> dict[str, Any]:
        """The call as saved: its data, never its metadata's values (credentials)."""
        if self.flow is not None:
            return {
                "workload": self.flow.function,
                "metadata_keys": _metadata_keys(self.flow.metadata),
                "security": self.security.describe(),
            }
        if self.call is None:
            return {"security": self.security.describe()} if self.security.tls else {}
        call = self.call
        recorded = {
            "method": call.method,
            "schema": call.schema_source,
            "data": redact(call.data),
            "metadata_keys": _metadata_keys(call.metadata),
            "stream_messages": call.stream_messages,
            "security": self.security.describe(),
        }
        if call.mix:
            recorded["mix"] = [
                {
                    "method": part.method,
                    "name": part.label or part.method,
                    "weight": part.weight,
                    "data": redact(part.data),
                    "metadata_keys": _metadata_keys(part.metadata),
                    "timeout_s": part.timeout_s,
                }
                for part in call.mix
            ]
        return recorded


def _metadata_keys(metadata: str) -> list[str]:
    """What is saved of metadata: its keys, never its values (credentials)."""
    return list(json.loads(metadata)) if metadata.strip() else []


def describe_mix(call: PlannedCall) -> str:
    """A mix's title: its methods and weights, "mix Say:3 + Expand:1"."""
    return "mix " + " + ".join(
        f"{(part.label or part.method).rpartition('/')[2]}:{part.weight}" for part in call.mix
    )


def build_run_options(args: RunArgs) -> RunOptions:
    """Every option checked, before anything starts."""
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
    if args.max_error_rate is not None and not 0 <= args.max_error_rate < 1:
        raise UsageError(
            f"bad --max-error-rate {args.max_error_rate:g}: a share of calls from 0 to below 1"
            " (0.01 = 1%)"
        )
    load = _load_settings(args, scenario)
    drivers = _cluster_drivers(parse_drivers(args.load), args)
    if call is not None and call.feed_mode == "once" and load.warmup_s:
        raise UsageError(
            "--feed once sends each line once: a timed --warmup could use them all; give"
            " warm-up calls as a count (--warmup 100) or none (--warmup 0)"
        )
    check_features(
        drivers,
        {
            **load_model_features(bool(args.rate or load.rate_schedule), load.connections),
            "feeder": call is not None and bool(call.feed_path),
            "flow": flow is not None,
            "stream_round_trip": call is not None and call.stream_round_trip,
            "mix": call is not None and bool(call.mix),
        },
    )
    placement = build_placement(args.pin, args.server_cpus, args.client_cpus, args.backing_cpus)
    outputs = outputs_from(
        args.exports, json=args.output, markdown=args.markdown, csv=args.csv, html=args.report
    )
    if args.prometheus is not None:
        from grpcbench.telemetry.prometheus import parse_listen_address, require_prometheus_client

        parse_listen_address(args.prometheus)
        require_prometheus_client()
    if args.otlp is not None:
        from grpcbench.telemetry.otlp import check_url, otlp_headers, require_otel

        require_otel()
        check_url(args.otlp, otlp_headers(args.otlp_headers))
    if (args.prometheus is not None or args.otlp is not None) and not load.interval_s:
        load = replace(load, interval_s=1.0)  # live figures arrive interval by interval
    load = replace(
        load,
        client_cpus=placement.client_cpus,
        # ghz's per-call formats need each call's record, kept up to ghz's limit.
        call_details=DETAIL_LIMIT if any(out.info.lists_calls for out in outputs) else 0,
    )
    if args.repeat <= 0:
        raise UsageError(f"bad --repeat {args.repeat}: must be a positive integer")
    if not 0 <= args.port < 65536:
        raise UsageError(f"bad --port {args.port}")
    options = RunOptions(
        scenario=scenario,
        targets=_targets(args, scenario),
        levels=_levels(args, scenario, load),
        load=load,
        drivers=drivers,
        driver_settings=DriverSettings(
            client_processes=resolve_client_processes(args.client_processes, placement),
            ghz=args.ghz,
            cluster=parse_cluster(args.cluster) if args.cluster else None,
            cluster_workers=args.cluster_workers,
        ),
        placement=placement,
        outputs=outputs,
        repeat=args.repeat,
        port=args.port,
        start_timeout_s=parse_duration(
            args.start_timeout or defaults.START_TIMEOUT, "--start-timeout"
        ),
        server_per_level=(
            scenario.server_per_level if args.server_per_level is None else args.server_per_level
        ),
        call=call,
        flow=flow,
        security=call_settings.security,
        max_error_rate=args.max_error_rate,
        secret_params=secret_names(service.server_params, service.workload_params),
        bind=_bind_address(args.bind),
        expected_statuses=parse_statuses(args.expect_status) if args.expect_status else ("OK",),
        preflight=args.preflight,
        name=args.name,
        tags=dict(args.tags),
        thresholds=tuple(parse_threshold(text) for text in args.thresholds),
        profile=_profile_settings(args),
    )
    _check_service(options, service)
    _check_profiled_generator(options)
    _check_client_allocations(options)
    _check_workloads(options, service)
    _check_secrets_stay_encrypted(options, args.allow_plaintext_secrets)
    return options


def _profile_settings(args: RunArgs) -> ProfileSettings | None:
    """--profile: py-spy's settings, and the directory beside the results file (or a new
    one in the current directory) where each cell's collapsed stacks go."""
    if not args.profile:
        return None
    if not 1 <= args.profile_rate <= 10_000:
        raise UsageError(f"bad --profile-rate {args.profile_rate}: 1 to 10000 samples/s")
    if args.output:
        directory = Path(args.output).with_suffix(".profiles")
    else:
        directory = Path(f"grpcbench-profiles-{time.strftime('%Y%m%d-%H%M%S')}")
    return ProfileSettings(
        directory.resolve(),
        args.profile_rate,
        args.profile_native,
        args.profile_idle,
        args.profile_generator,
    )


def _check_client_allocations(options: RunOptions) -> None:
    """--client-allocations traces the built-in generator's workload here, with memray."""
    if not options.load.client_allocations:
        return
    if not runs_here(options.drivers):
        raise UsageError(
            "--client-allocations traces the built-in generator's calls here: with"
            f" --load {','.join(options.drivers)} there is none (ghz is Go; --cluster's"
            " generators run on the workers)"
        )
    check_available()


def _check_profiled_generator(options: RunOptions) -> None:
    """--profile generator samples the built-in generator's processes on this machine."""
    if options.profile and options.profile.generator and not runs_here(options.drivers):
        raise UsageError(
            "--profile generator samples the built-in generator's processes here: with"
            f" --load {','.join(options.drivers)} there are none (ghz is Go; --cluster's"
            " generators run on the workers)"
        )


def _check_secrets_stay_encrypted(options: RunOptions, allowed: bool) -> None:
    """Each cluster worker receives the call - metadata values and the client key
    included - through the scheduler: over tcp:// or ws:// that is plaintext on the
    network, so only tls:// and wss:// carry them unless the user allows it. An
    encrypted scheme without Dask's TLS settings is refused here, naming them."""
    cluster = options.driver_settings.cluster or ""
    scheme = cluster.partition("://")[0] if "://" in cluster else ""
    if scheme in ENCRYPTED_CLUSTER_SCHEMES:
        _check_dask_tls(cluster)
    if not scheme or scheme in ENCRYPTED_CLUSTER_SCHEMES or allowed:
        return
    secrets = []
    if options.call is not None and json.loads(options.call.metadata or "{}"):
        secrets.append("the metadata (-m/-M)")
    if options.security.key:
        secrets.append("the client key (--key)")
    if secrets:
        raise UsageError(
            f"--cluster {cluster} would send {' and '.join(secrets)} to its workers in"
            " plaintext: use a tls:// or wss:// scheduler (Dask's security settings), or"
            " --allow-plaintext-secrets on a network you trust"
        )


def _check_dask_tls(cluster: str) -> None:
    """A tls:// or wss:// scheduler needs the client's certificate, key and CA from
    Dask's configuration; without them Dask fails after a long connect timeout."""
    try:
        import dask.config
    except ImportError:
        return  # the cluster extra's own one-line message comes from the driver
    tls = dask.config.get("distributed.comm.tls", default={}) or {}
    client = tls.get("client") or {}
    missing = [
        env for env, value in (
            ("DASK_DISTRIBUTED__COMM__TLS__CA_FILE", tls.get("ca-file")),
            ("DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT", client.get("cert")),
            ("DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY", client.get("key")),
        ) if not value
    ]  # fmt: skip
    if missing:
        raise UsageError(
            f"--cluster {cluster} needs Dask's TLS settings for this client: set"
            f" {', '.join(missing)} (or distributed.comm.tls.* in Dask's configuration)"
        )


def _cluster_drivers(drivers: tuple[str, ...], args: RunArgs) -> tuple[str, ...]:
    """With --cluster the built-in engine runs on the cluster's workers (driver dask)."""
    if args.cluster_workers is not None and (not args.cluster or args.cluster_workers <= 0):
        raise UsageError("--cluster-workers N needs --cluster and a positive N")
    if not args.cluster:
        return drivers
    return on_cluster(drivers)


def _bind_address(text: str | None) -> str:
    """127.0.0.1 unless the user explicitly asks for another address (``--bind``)."""
    if text is None:
        return LOCALHOST
    address = text.strip()
    if address in ("0.0.0.0", "::", ""):
        raise UsageError(
            f"--bind {text!r}: give the address remote workers will dial (this machine's IP),"
            " not a wildcard"
        )
    try:
        socket.getaddrinfo(address, None)
    except (OSError, UnicodeError, ValueError):  # unknown; not a host name at all
        raise UsageError(f"--bind {text!r}: not an address of this machine") from None
    return address


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


def resolve_scenario(args: RunArgs) -> tuple[Scenario, ServiceDefinition]:
    """The scenario with its overrides, every param checked by the service that reads it."""
    chosen = load_scenario(args.scenario)
    if args.service is not None and args.service != chosen.service:
        # The scenario's params and variants are its own service's, not this one's.
        chosen = replace(
            chosen, service=args.service, server_params={}, workload_params={}, variants=(),
            default_variants=(),
        )  # fmt: skip
    service = load_service(chosen.service)  # fail here, not inside a server process
    owner = f"service {chosen.service} (scenario {chosen.name})"
    declared = service.server_params
    for name, value in args.named_server_params().items():
        option = "--" + name.replace("_", "-")
        if declared is None:
            continue
        if name not in declared:
            raise UsageError(
                f"{option} does not apply to scenario {chosen.name}"
                f" (its service {chosen.service} has no {name} parameter)"
            )
        try:
            declared[name].check(name, value)
        except OneLineError as error:
            if declared[name].validate is not None:  # its own words
                raise UsageError(str(error)) from None
            raise UsageError(
                f"bad {option} {redact(value) if isinstance(value, str) else value!r}:"
                f" expected {declared[name].describe()}"
            ) from None
    server = {
        **chosen.server_params,
        **parse_params(list(args.server_params), "--server-param"),
        **args.named_server_params(),
    }
    workload = {
        **chosen.workload_params,
        **parse_params(list(args.workload_params), "--workload-param"),
    }
    variants = tuple(
        Variant(v.name, check_params(owner, f"workload param of variant {v.name}",
                                     service.workload_params, v.params))
        for v in choose_variants(chosen, args.variants)
    )  # fmt: skip
    server = check_params(owner, "server param", declared, server)
    chosen = replace(
        chosen,
        server_params=service.complete_params(server) if service.complete_params else server,
        workload_params=check_params(owner, "workload param", service.workload_params, workload),
        variants=variants,
    )
    return chosen, service


def _load_settings(args: RunArgs, scenario: Scenario) -> LoadSettings:
    """The scenario's size, warm-up and deadline, then what was given, through the
    settings' declarations (the same for the command line and the pytest plugin)."""
    given = parse_values(LoadSettings, {k: v for k, v in args.settings.items() if v is not None})
    if "requests" in given and given.get("duration_s"):
        raise UsageError("give either --requests or --duration, not both")
    scenario_values = parse_values(
        LoadSettings,
        {
            "requests": scenario.requests,
            "warmup": scenario.warmup,
            "timeout": scenario.timeout,
            "client_loop": defaults.CLIENT_LOOP,  # uvloop where it is installed
        },
    )
    values = {**scenario_values, **given}
    schedule = values.get("rate_schedule")
    if schedule is not None:  # the level lasts the schedule
        if "requests" in given or given.get("duration_s"):
            raise UsageError(
                f"--rate-schedule sets the level's length ({schedule.duration_s:g} s):"
                " drop --requests/--duration"
            )
        values["duration_s"] = schedule.duration_s
    if values.get("duration_s"):
        values["requests"] = 0
        _level_runs_its_duration(values, "max_level_s" in given, schedule is not None)
    if values.get("timeout_s") == NO_TIMEOUT:  # -t 0: a call may take the whole level
        values["timeout_s"] = values.get("max_level_s", LoadSettings().max_level_s)
    return LoadSettings(**values)


def _level_runs_its_duration(values: dict[str, Any], limit_given: bool, schedule: bool) -> None:
    """A level given a time (-z, a rate schedule) runs that time: the level's time limit
    (--max-level, 300 s unless given) rises to it, or, given shorter, is refused."""
    duration = values["duration_s"]
    limit = values.get("max_level_s", LoadSettings().max_level_s)
    if duration <= limit:
        return
    if limit_given:
        what = "--rate-schedule lasts" if schedule else "--duration is"
        raise UsageError(
            f"{what} {duration:g} s, longer than --max-level ({limit:g} s): raise --max-level"
        )
    values["max_level_s"] = duration


def _levels(args: RunArgs, scenario: Scenario, load: LoadSettings) -> tuple[LevelPlan, ...]:
    """Every level of a column: loads x swept channel counts x variants."""
    channel_counts = parse_positive_int_list(args.channels, "--channels") if args.channels else ()
    if channel_counts and load.connections.mode != "auto":
        raise UsageError("--channels sweeps pool sizes; do not combine it with --connections")
    rates = parse_positive_float_list(args.rate, "--rate") if args.rate else ()
    schedule = load.rate_schedule
    if schedule is not None and (rates or args.concurrency is not None):
        raise UsageError(
            "--rate-schedule is the level's rate: drop --rate/--concurrency (cap calls in"
            " flight with --max-in-flight)"
        )
    if schedule is not None:
        rates = (schedule.peak,)
    if rates and load.connections.mode == "per-user":
        raise UsageError("--connections per-user gives each virtual user a connection: a closed"
                         " loop; an open loop (--rate) has no users")  # fmt: skip
    if rates and args.concurrency is not None:
        raise UsageError(
            "--rate replaces --concurrency (open loop); cap calls in flight with --max-in-flight"
        )
    concurrency = (
        parse_positive_int_list(args.concurrency, "concurrency")
        if args.concurrency is not None
        else scenario.concurrency
    )
    loads = (
        [(load.max_in_flight, rate) for rate in rates]
        if rates
        else [(level, 0.0) for level in concurrency]
    )
    variants = [variant.name for variant in scenario.variants] or [""]
    return tuple(
        LevelPlan(
            level,
            channels,
            rate,
            variant,
            load.connection_label(channels),
            schedule.text if schedule else "",
        )  # fmt: skip
        for level, rate in loads
        for channels in channel_counts or (0,)
        for variant in variants
    )


def _target_address(args: RunArgs) -> str | None:
    """``--target HOST:PORT`` or, as in ghz, the address as the last argument."""
    if args.target and args.address and args.target != args.address:
        raise UsageError(f"two targets: --target {args.target} and {args.address}; give one")
    return args.target or args.address


def _targets(args: RunArgs, scenario: Scenario) -> tuple[TargetPlan, ...]:
    address = _target_address(args)
    if address:
        parse_host_port(address)
        if args.servers:
            raise UsageError(
                "--target benchmarks an existing server; do not combine with --servers"
            )
        if args.target_pid is not None:
            _check_target_pid(args.target_pid, address)
        return (make_target_plan("external", address=address, pid=args.target_pid),)
    if args.target_pid:
        raise UsageError("--target-pid needs --target")
    specs = parse_server_specs(list(args.servers or scenario.servers))
    return tuple(make_target_plan("server", spec=spec) for spec in specs)


def _check_target_pid(pid: int, address: str) -> None:
    """--target-pid's CPU and memory are reported as the server's: the process (or one
    of its children, a forked server) must listen on the target's port. PID 1, or any
    process that is not the server, is refused rather than measured as it."""
    if not psutil.pid_exists(pid):
        raise UsageError(f"--target-pid {pid}: no such process")
    port = parse_host_port(address)[1]
    try:
        root = psutil.Process(pid)
        tree = [root, *root.children(recursive=True)]
        listening = {
            connection.laddr.port
            for process in tree
            for connection in process.net_connections(kind="inet")
            if connection.status == psutil.CONN_LISTEN and connection.laddr
        }
    except psutil.AccessDenied:
        raise UsageError(
            f"--target-pid {pid}: cannot check that it listens on port {port} (its sockets"
            " are not readable: run grpcbench as its user or as root), so its CPU would not"
            " be known to be the server's"
        ) from None
    except psutil.NoSuchProcess:
        raise UsageError(f"--target-pid {pid}: no such process") from None
    if port not in listening:
        shown = ", ".join(str(p) for p in sorted(listening)) or "none"
        raise UsageError(
            f"--target-pid {pid} ({root.name()}) does not listen on port {port} of --target"
            f" {address} (its listening ports: {shown}): its CPU would not be the server's"
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
        if service.check_level and any(t.kind == "server" for t in options.targets):
            service.check_level(options.scenario.server_params, params, plan.concurrency)


def choose_variants(scenario: Scenario, names: str | None) -> tuple[Variant, ...]:
    """--variants, else the scenario's default list, else all of its variants."""
    if not names:
        if scenario.default_variants:
            return tuple(v for v in scenario.variants if v.name in scenario.default_variants)
        return scenario.variants
    known = {variant.name: variant for variant in scenario.variants}
    chosen = []
    for name in (n.strip() for n in names.split(",")):
        if name not in known:
            listed = ", ".join(known) or "none"
            raise UsageError(f"unknown variant {name!r} of {scenario.name} (variants: {listed})")
        chosen.append(known[name])
    return tuple(chosen)


def default_placement() -> Placement:
    """Server on the first allowed CPU, generator on the others (if there are others)."""
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except AttributeError:
        return Placement((), ())
    if len(cpus) < 2:
        return Placement((), ())
    return Placement((cpus[0],), tuple(cpus[1:]))


def build_placement(
    pin: bool, server_cpus: str | None, client_cpus: str | None, backing_cpus: str | None = None
) -> Placement:
    if not pin:
        if server_cpus or client_cpus or backing_cpus:
            raise UsageError(
                "--no-pin cannot be combined with --server-cpus/--client-cpus/--backing-cpus"
            )
        return Placement((), ())
    default = default_placement()
    placement = Placement(
        parse_cpu_set(server_cpus, "--server-cpus") if server_cpus else default.server_cpus,
        parse_cpu_set(client_cpus, "--client-cpus") if client_cpus else default.client_cpus,
        parse_cpu_set(backing_cpus, "--backing-cpus") if backing_cpus else (),
    )
    if hasattr(os, "sched_getaffinity"):
        allowed = os.sched_getaffinity(0)
        used = placement.server_cpus + placement.client_cpus + placement.backing_cpus
        bad = sorted(set(used) - allowed)
        if bad:
            raise UsageError(f"CPU {bad[0]} is not available (allowed: {sorted(allowed)})")
    return placement


def resolve_client_processes(text: str, placement: Placement) -> int:
    """``auto``: one generator process per client CPU (each is one Python thread)."""
    if text.strip() == "auto":
        return max(1, len(placement.client_cpus) or (os.cpu_count() or 2) // 2)
    if not text.strip().isdecimal() or int(text) <= 0:
        raise UsageError(f"bad --client-processes {text!r}: a positive integer or auto")
    return int(text)
