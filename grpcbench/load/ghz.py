"""The ghz driver: the real ghz binary (Go), mapped into grpcbench's result model.

ghz is an independent generator users trust, so running it beside the built-in
driver is how a user checks grpcbench's numbers. Where ghz's rules differ from
the built-in driver's, grpcbench aligns them:
- ghz leaves failed calls out of its latency figures unless ``--count-errors``;
  grpcbench passes ``--count-errors`` and, like the built-in driver, builds its
  histogram from every finished call's record (OK or not).
- ghz keeps at most 1,000,000 per-call records; beyond that the latency figures
  cover only the recorded calls, and the result says so (counts stay exact:
  they come from ghz's status distribution).
- Neither driver corrects for coordinated omission (both are closed loops).
- Warm-up is a separate ghz invocation whose report is discarded, so the
  measured run's wall time and CPU exclude it.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import resource
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from grpcbench.base.errors import DriverError, UsageError
from grpcbench.base.go_time import parse_rfc3339_nano
from grpcbench.base.processes import start_child
from grpcbench.base.resources import protos_dir
from grpcbench.base.secrets import SecretFiles
from grpcbench.load.driver import MEASUREMENT_STARTED, DriverSettings, ProgressCallback
from grpcbench.load.recorders import error_key
from grpcbench.model.call_details import CallDetails
from grpcbench.model.load_result import GeneratorJob, LoadResult
from grpcbench.observe.cpu_share import NeighbourMeter
from grpcbench.rpc.call import MethodCall
from grpcbench.rpc.client_options import ClientOptions
from grpcbench.rpc.security import ChannelSecurity
from grpcbench.services.base import ServiceDefinition
from grpcbench.services.registry import load_service
from grpcbench.stats.histogram import LatencyRecorder

GHZ_VERSION = "v0.120.0"
INSTALL_HINT = f"go install github.com/bojand/ghz/cmd/ghz@{GHZ_VERSION}"
GHZ_DETAIL_LIMIT = 1_000_000


class GhzError(DriverError):
    """ghz failed or printed something grpcbench cannot read."""


def find_ghz(explicit: str | None = None) -> str:
    """The ghz binary from ``--ghz`` or PATH, or one clear error saying how to get it."""
    if explicit:
        path = Path(explicit)
        if path.is_file() and os.access(path, os.X_OK):
            # Absolute: Path("./ghz") is "ghz", which exec would look up on PATH.
            return str(path.resolve())
        raise UsageError(f"--ghz {explicit}: not an executable file")
    found = shutil.which("ghz")
    if not found:
        raise UsageError(
            f"ghz not found on PATH: install it with `{INSTALL_HINT}` or pass --ghz PATH"
        )
    return found


def _go_duration(seconds: float) -> str:
    return f"{max(1, round(seconds * 1000))}ms"


def bundled_request(
    service: ServiceDefinition, params: Mapping[str, Any]
) -> tuple[str, dict[str, Any]]:
    """The method and JSON request ghz sends for a service's own workload (no --call)."""
    if service.json_request is None or not service.proto:
        raise UsageError(
            f"service {service.name} names no method for ghz: give --call (and --proto)"
        )
    return service.json_request(params)


def _service_call(spec: GeneratorJob, proto_root: Path) -> list[str]:
    """A bundled service's method and request, for its own workload params."""
    service = load_service(spec.service)
    call, data = bundled_request(service, spec.workload_params)
    return [
        "--insecure",
        f"--proto={proto_root / service.proto}",
        f"--import-paths={proto_root}",
        f"--call={call}",
        f"--data={json.dumps(data)}",
        "--disable-template-functions",
    ]


def _method_call(spec: GeneratorJob, workdir: Path, secrets: SecretFiles | None) -> list[str]:
    """``--call``: the same schema (as a protoset), data, metadata and TLS as the
    built-in driver's. Files, not arguments: metadata may hold credentials, and
    a command line is visible to every user of the machine; with ``secrets`` the
    metadata is an in-memory file ghz inherits, never on a disk."""
    assert spec.call is not None
    call = MethodCall.from_json(spec.call)
    protoset = workdir / "schema.protoset"
    protoset.write_bytes(call.schema.descriptor_set)
    data = workdir / "data.json"
    data.write_text(call.data)
    metadata = secrets.path(call.metadata) if secrets is not None else None
    if metadata is None:
        written = workdir / "metadata.json"
        written.touch(mode=0o600)
        written.write_text(call.metadata)
        metadata = str(written)
    argv = [
        f"--protoset={protoset}",
        f"--call={call.call.replace('/', '.')}",
        f"--data-file={data}",
        f"--metadata-file={metadata}",
    ]
    if call.templates == "off":
        argv.append("--disable-template-data")
    elif call.templates == "no-functions":
        argv.append("--disable-template-functions")
    if call.stream_messages:
        argv.append(f"--stream-call-count={call.stream_messages}")
    if call.dynamic:
        argv.append("--stream-dynamic-messages")
    if call.stream_interval_s:
        argv.append(f"--stream-interval={_go_duration(call.stream_interval_s)}")
    if call.stream_duration_s:
        argv.append(f"--stream-call-duration={_go_duration(call.stream_duration_s)}")
    security = ChannelSecurity.from_json(spec.security)
    if not security.tls:
        return [*argv, "--insecure"]
    for option, value in (
        ("--cacert", security.cacert), ("--cert", security.cert), ("--key", security.key),
        ("--cname", security.cname),
    ):  # fmt: skip
        if value:
            argv.append(f"{option}={Path(value).resolve() if option != '--cname' else value}")
    if security.skip_tls:
        argv.append("--skipTLS")
    return argv


def ghz_command(
    binary: str,
    spec: GeneratorJob,
    requests: int,
    duration_s: float,
    proto_root: Path,
    workdir: Path | None = None,
    secrets: SecretFiles | None = None,
) -> list[str]:
    """The ghz argv for one phase (warm-up or measured) of a level; ``workdir``
    holds the files of a ``--call`` (schema, data; metadata unless ``secrets``)."""
    cores = len(spec.settings.client_cpus) or os.cpu_count() or 1
    if spec.call is not None:
        if workdir is None:
            raise ValueError("a --call needs a directory for ghz's files")
        what = _method_call(spec, workdir, secrets)
    else:
        what = _service_call(spec, proto_root)
    argv = [
        binary,
        *what,
        f"--concurrency={spec.share.concurrency}",
        f"--connections={min(spec.share.connections, spec.share.concurrency)}",
        f"--timeout={_go_duration(spec.settings.timeout_s)}",
        f"--connect-timeout={_go_duration(spec.settings.connect_timeout_s)}",
        *ClientOptions.of(spec.settings).ghz_flags(),
        f"--cpus={cores}",
        "--count-errors",
        "--format=json",
    ]
    if duration_s:
        # "wait": calls in flight at the end finish normally, as in the built-in driver.
        argv += [f"--duration={_go_duration(duration_s)}", "--duration-stop=wait"]
    else:
        # Not --max-duration: with --total, ghz v0.120.0 can spin at 100% CPU and never
        # finish (seen here at concurrency 50); the level's time limit is enforced by
        # GhzDriver instead.
        argv += [f"--total={requests}"]
    return [*argv, spec.target]


_GHZ_ERROR = re.compile(r"rpc error: code = (\w+) desc = (.*)", re.DOTALL)


def ghz_error_key(text: str) -> str:
    """ghz's "rpc error: code = Unavailable desc = ..." as grpcbench counts errors."""
    match = _GHZ_ERROR.fullmatch(text)
    return error_key(match.group(1), match.group(2)) if match else text


def parse_ghz_report(report: dict[str, Any], spec: GeneratorJob, cpu_s: float = 0.0) -> LoadResult:
    """Map ghz's JSON report onto a ``LoadResult`` (pure: tested with stored reports)."""
    try:
        statuses = {str(k): int(v) for k, v in (report.get("statusCodeDistribution") or {}).items()}
        details = report.get("details") or []
        wall_s = int(report["total"]) / 1e9
        recorder = LatencyRecorder()
        for record in details:
            recorder.record(int(record["latency"]) // 1000)
        errors = {
            ghz_error_key(str(text)): int(n)
            for text, n in (report.get("errorDistribution") or {}).items()
        }
        kept = _call_details(details, spec.settings.call_details)
    except (KeyError, TypeError, ValueError) as error:
        raise GhzError(f"unexpected ghz report ({error!r})") from None
    count = sum(statuses.values())
    note = ""
    if recorder.count < count:
        note = (
            f"ghz kept per-call records for {recorder.count} of {count} calls"
            f" (its limit is {GHZ_DETAIL_LIMIT:,}); latency figures cover those calls only"
        )
    return LoadResult(
        driver="ghz",
        concurrency=spec.share.concurrency,
        connections=min(spec.share.connections, spec.share.concurrency),
        statuses=statuses,
        latency=recorder.summary(),
        wall_s=wall_s,
        client_cpu_s=cpu_s,
        cpu_cores=float(len(spec.settings.client_cpus) or os.cpu_count() or 1),
        truncated=report.get("endReason") == "timeout" and not spec.settings.duration_s,
        latency_note=note,
        errors=errors,
        details=kept,
    )


def _call_details(records: list[dict[str, Any]], limit: int) -> CallDetails | None:
    """ghz's per-call records as grpcbench keeps them, when a format lists calls."""
    if not limit:
        return None
    kept = CallDetails(limit=limit)
    for record in records:
        match = _GHZ_ERROR.fullmatch(str(record.get("error") or ""))
        kept.add(
            parse_rfc3339_nano(str(record["timestamp"])),
            int(record["latency"]),
            str(record["status"]),
            match.group(2) if match else str(record.get("error") or ""),
        )
    return kept


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def check_workload(service: str, workload_params: Mapping[str, Any]) -> None:
    """ghz cannot run every workload (e.g. a paging loop): the service says which.
    (A --call is always runnable: the runner skips this check for it.)"""
    bundled_request(load_service(service), workload_params)


class GhzDriver:
    name = "ghz"

    def __init__(self, binary: str | None = None) -> None:
        self.binary = find_ghz(binary)
        self.proto_root = protos_dir()

    async def _invoke(
        self, argv: Sequence[str], cpus: Sequence[int], time_limit_s: float,
        pass_fds: Sequence[int] = (),
    ) -> tuple[dict[str, Any], float]:  # fmt: skip
        """Run ghz once (``pass_fds``: its secret files); returns its parsed report and
        the CPU seconds it used."""
        cpu_before = _children_cpu_s()
        child = await start_child(argv, cpus, pass_fds)
        try:
            stdout, _ = await asyncio.wait_for(child.process.communicate(), time_limit_s)
        except TimeoutError:
            raise GhzError(
                f"ghz did not finish within the level's time limit ({time_limit_s:.0f}s)"
            ) from None
        finally:
            await child.stop()
        # ghz was waited for, so its CPU time is now in RUSAGE_CHILDREN.
        cpu_s = _children_cpu_s() - cpu_before
        tail = child.stderr_tail()
        if child.process.returncode != 0:
            raise GhzError(
                f"ghz exited with code {child.process.returncode}" + (f":\n{tail}" if tail else "")
            )
        try:
            return json.loads(stdout), cpu_s
        except json.JSONDecodeError:
            shown = stdout.decode(errors="replace").strip()[-300:]
            raise GhzError(
                f"ghz printed output that is not a JSON report: {shown!r}"
                + (f"\nits stderr:\n{tail}" if tail else "")
            ) from None

    @staticmethod
    def _time_limit(spec: GeneratorJob, duration_s: float) -> float:
        """A phase may take its duration (or the level cap), plus one call deadline."""
        return (duration_s or spec.settings.max_level_s) + spec.settings.timeout_s + 10.0

    async def run(self, spec: GeneratorJob, progress: ProgressCallback) -> LoadResult:
        with (
            tempfile.TemporaryDirectory(prefix="grpcbench-ghz-") as workdir,
            SecretFiles() as secrets,
        ):
            return await self._run(spec, progress, Path(workdir), secrets)

    async def _run(
        self, spec: GeneratorJob, progress: ProgressCallback, workdir: Path, secrets: SecretFiles
    ) -> LoadResult:
        cpus = spec.settings.client_cpus
        if spec.share.warmup_requests or spec.settings.warmup_s:
            warmup = ghz_command(
                self.binary, spec, spec.share.warmup_requests, spec.settings.warmup_s,
                self.proto_root, workdir, secrets,
            )  # fmt: skip
            await self._invoke(
                warmup, cpus, self._time_limit(spec, spec.settings.warmup_s), secrets.fds
            )
        # ghz reports only when it ends, so the progress bar jumps from 0 to done.
        progress(MEASUREMENT_STARTED, 0)
        measured = ghz_command(
            self.binary, spec, spec.share.requests, spec.settings.duration_s, self.proto_root,
            workdir, secrets,
        )  # fmt: skip
        neighbours = NeighbourMeter(cpus)
        neighbours.start()
        report, cpu_s = await self._invoke(
            measured, cpus, self._time_limit(spec, spec.settings.duration_s), secrets.fds
        )
        result = parse_ghz_report(report, spec, cpu_s)
        others, steal = neighbours.taken(result.cpu_cores, cpu_s)
        result = replace(result, client_others_s=others, client_steal_share=steal)
        progress(result.count, result.count - result.ok)
        return result


def create(settings: DriverSettings) -> GhzDriver:
    return GhzDriver(settings.ghz)
