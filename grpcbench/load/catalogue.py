"""Catalogue of load drivers: what each is, what it can do, and where its code lives.

Like ``servers.kinds``, only metadata lives here, so listing drivers, checking
options and labelling tables never imports a driver. What a driver can do is
declared on its entry (``features``, ``runs_here``, ``on_cluster``...); every check
and help text reads the declarations, never a driver's name. Adding a driver is one
module with a ``create(settings)`` function plus one entry: below, or a plugin's
``grpcbench.drivers`` entry point (``base.plugins``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from grpcbench.base.errors import UsageError
from grpcbench.base.plugins import Registry
from grpcbench.base.references import load_reference
from grpcbench.model.connections import ConnectionStrategy

if TYPE_CHECKING:  # a catalogue is read by every command's options; drivers load on use
    from grpcbench.load.driver import DriverSettings, LoadDriver

# What a driver can do, by name, with how a user asks for it (for the refusal's words).
FEATURES: dict[str, str] = {
    "open_loop": "--rate or --rate-schedule",
    "per_request": "--connections per-request or checkout:N",
    "least_busy": "pool:N:least-busy",
    "feeder": "a feeder file (-D @FILE, --feed)",
    "flow": "a --workload flow",
    "mix": "a mix of methods",
    "stream_round_trip": "--stream-round-trip",
    "worker_schedule": "--worker-schedule (ghz's --concurrency-schedule)",
    "think_time": "--think-time (a virtual user's pause between calls)",
    "scenarios": "several scenarios at once ([[scenarios]])",
}


@dataclass(frozen=True)
class DriverInfo:
    name: str
    description: str
    factory: str  # "module:function" taking DriverSettings, imported only when used
    # Keys of FEATURES this driver runs; a run asking another is refused up front.
    features: frozenset[str] = frozenset()
    # One sentence on what it cannot do, said when a feature is refused.
    limits: str = ""
    # Its generator is grpcbench's Python engine in processes on this machine: what
    # --client-allocations traces and --profile generator samples.
    runs_here: bool = False
    # The built-in engine's client stack (--client-stack) makes its calls.
    uses_client_stack: bool = False
    # With --cluster, this driver runs as that one (its engine on the workers).
    on_cluster: str = ""
    # How to read its columns: a line under every table that has one.
    note: str = ""
    # Its figures are made up (for tests): never suggested in place of another driver.
    synthetic: bool = False
    # "module:function" taking (service, workload params), raising UsageError for a
    # workload this driver cannot run; "" = it runs every workload.
    workload_check: str = ""

    def able(self, feature: str) -> bool:
        return feature in self.features


ENGINE_FEATURES = frozenset(FEATURES)  # the built-in engine runs every one

DRIVERS: Registry[DriverInfo] = Registry(
    "grpcbench.drivers",
    DriverInfo,
    (
        DriverInfo(
            name="builtin",
            description="grpcbench's own generator (its wire client stack, or grpc.aio with"
            " --client-stack grpcio), in --client-processes processes",
            factory="grpcbench.load.builtin:create",
            features=ENGINE_FEATURES,
            runs_here=True,
            uses_client_stack=True,
            on_cluster="dask",
        ),
        DriverInfo(
            name="ghz",
            description="the ghz Go tool (github.com/bojand/ghz), a second, independent client",
            factory="grpcbench.load.ghz:create",
            limits="ghz runs closed loops over a fixed set of connections, calls one method"
            " per run with -d as one JSON request or a list, and times whole calls",
            note="ghz columns: latencies of every call, failed ones included (grpcbench passes"
            " --count-errors and reads ghz's per-call records, like the built-in driver);"
            " neither driver corrects for coordinated omission (both are closed loops).",
            workload_check="grpcbench.load.ghz:check_workload",
        ),
        DriverInfo(
            name="dask",
            description="the built-in engine on Dask distributed workers (--cluster), merged",
            factory="grpcbench.load.cluster:create",
            # A worker schedule numbers one process's workers over time.
            features=ENGINE_FEATURES - {"worker_schedule"},
            uses_client_stack=True,
            note="dask columns: the built-in engine on several Dask workers (--cluster) that"
            " warmed up, then measured from one common start; counts add and histograms"
            " merge exactly.",
        ),
        DriverInfo(
            name="fake",
            description="synthetic, seeded results without network traffic (for tests)",
            factory="grpcbench.load.fake:create",
            features=ENGINE_FEATURES - {"scenarios"},
            note="fake columns: synthetic figures from the fake driver, not measurements.",
            synthetic=True,
        ),
    ),
)


def drivers_help() -> str:
    """--load's help, from the catalogue (plugins' drivers included)."""
    listed = "; ".join(f"{info.name}: {info.description}" for info in DRIVERS.values())
    return (
        f"Load driver(s), comma-separated ({listed}). builtin,ghz runs both on the same"
        " servers and levels, side by side."
    )


def driver_info(name: str) -> DriverInfo:
    if name not in DRIVERS:
        raise UsageError(f"unknown load driver {name!r} (known drivers: {', '.join(DRIVERS)})")
    return DRIVERS[name]


def parse_drivers(text: str) -> tuple[str, ...]:
    """``"builtin,ghz"`` -> ("builtin", "ghz"), every name checked."""
    names = tuple(name.strip() for name in text.split(",") if name.strip())
    if not names:
        raise UsageError(f"no load driver in {text!r} (known drivers: {', '.join(DRIVERS)})")
    for name in names:
        driver_info(name)
    return names


def check_features(names: Sequence[str], asked: Mapping[str, bool]) -> None:
    """One clear error, before anything starts, for a feature (a key of FEATURES) the
    run asks for and a chosen driver does not declare."""
    for name in names:
        info = driver_info(name)
        missing = [FEATURES[f] for f, needed in asked.items() if needed and not info.able(f)]
        if missing:
            able = able_drivers(*(feature for feature, needed in asked.items() if needed))
            raise UsageError(
                f"--load {name} cannot run {', '.join(missing)}"
                + (f" ({info.limits})" if info.limits else "")
                + (f": use --load {' or '.join(able)}" if able else "")
            )


def able_drivers(*features: str) -> list[str]:
    """The drivers to suggest for these features (never a synthetic one)."""
    return [d.name for d in DRIVERS.values() if all(map(d.able, features)) and not d.synthetic]


def load_model_features(open_loop: bool, connections: ConnectionStrategy) -> dict[str, bool]:
    """The features a load model asks of a driver."""
    return {
        "open_loop": open_loop,
        "per_request": connections.mode in ("per-request", "checkout"),
        "least_busy": connections.policy == "least-busy",
    }


def runs_here(names: Sequence[str]) -> bool:
    """Whether any of these drivers runs grpcbench's engine in processes on this machine."""
    return any(driver_info(name).runs_here for name in names)


def check_generator_here(names: Sequence[str], asked: str, does: str) -> None:
    """``asked`` (an option) needs a generator of grpcbench's engine on this machine."""
    if not runs_here(names):
        what = "; ".join(f"{name}: {driver_info(name).description}" for name in names)
        raise UsageError(
            f"{asked} {does} here: with --load {','.join(names)} there is none ({what})"
        )


def on_cluster(names: Sequence[str]) -> tuple[str, ...]:
    """The drivers as they run with --cluster (builtin's engine as dask)."""
    if not any(driver_info(name).on_cluster for name in names):
        able = [d.name for d in DRIVERS.values() if d.on_cluster and not d.synthetic]
        raise UsageError(
            f"--cluster runs the built-in engine on the cluster: keep {' or '.join(able)} in --load"
        )
    return tuple(driver_info(name).on_cluster or name for name in names)


def check_workload(name: str, service: str, workload_params: Mapping[str, Any]) -> None:
    """One clear error, before anything starts, for a workload the driver cannot run."""
    info = driver_info(name)
    if info.workload_check:
        load_reference(info.workload_check)(service, workload_params)


def make_driver(name: str, settings: DriverSettings | None = None) -> LoadDriver:
    from grpcbench.load.driver import DriverSettings

    driver: LoadDriver = load_reference(driver_info(name).factory)(settings or DriverSettings())
    return driver
