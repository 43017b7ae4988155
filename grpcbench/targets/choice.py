"""What a run's columns are: servers grpcbench starts (from --servers or the
scenario) or one running server (--target, or ghz's positional address), and the
address the started ones listen on (--bind)."""

from __future__ import annotations

import socket

from grpcbench.base.errors import UsageError
from grpcbench.base.parsing import parse_host_port
from grpcbench.servers.spec import parse_server_specs
from grpcbench.targets import TargetPlan, make_target_plan

LOCALHOST = "127.0.0.1"


def target_address(target: str | None, address: str | None) -> str | None:
    """``--target HOST:PORT`` or, as in ghz, the address as the last argument (either
    may be in gRPC's name syntax: ``plain_address``)."""
    if target and address and target != address:
        raise UsageError(f"two targets: --target {target} and {address}; give one")
    given = target or address
    return plain_address(given) if given else given


def plain_address(text: str) -> str:
    """HOST:PORT from gRPC's name syntax, which ghz and grpcurl take (grpc's naming.md):
    ``dns:///HOST:PORT``, ``dns://RESOLVER/HOST:PORT`` (the resolver is the system's
    here) and ``passthrough:///HOST:PORT``; any other text as it is."""
    for scheme in ("dns:///", "passthrough:///"):
        if text.startswith(scheme):
            return text[len(scheme) :]
    if text.startswith("dns://"):
        return text[len("dns://") :].partition("/")[2]
    return text


def target_plans(
    address: str | None,
    servers: tuple[str, ...],
    target_pid: int | None,
    scenario_servers: tuple[str, ...],
) -> tuple[TargetPlan, ...]:
    """The columns: one external target, or a server of each spec."""
    if address:
        parse_host_port(address)
        if servers:
            raise UsageError(
                "--target benchmarks an existing server; do not combine with --servers"
            )
        if target_pid is not None:
            check_target_pid(target_pid, address)
        return (make_target_plan("external", address=address, pid=target_pid),)
    if target_pid:
        raise UsageError("--target-pid needs --target")
    specs = parse_server_specs(list(servers or scenario_servers))
    return tuple(make_target_plan("server", spec=spec) for spec in specs)


def bind_address(text: str, option: str = "--bind") -> str:
    """Another address than 127.0.0.1 for the servers grpcbench starts, checked: an
    address of this machine, not a wildcard."""
    address = text.strip()
    if address in ("0.0.0.0", "::", ""):
        raise UsageError(
            f"{option} {text!r}: give the address remote workers will dial (this machine's"
            " IP), not a wildcard"
        )
    try:
        socket.getaddrinfo(address, None)
    except (OSError, UnicodeError, ValueError):  # unknown; not a host name at all
        raise UsageError(f"{option} {text!r}: not an address of this machine") from None
    return address


# Linux's largest process id (PID_MAX_LIMIT): past it, no process, and psutil overflows.
PID_MAX = 2**22


def check_target_pid(pid: int, address: str) -> None:
    """--target-pid's CPU and memory are reported as the server's: the process (or one
    of its children, a forked server) must listen on the target's port. PID 1, or any
    process that is not the server, is refused rather than measured as it."""
    import psutil  # here: --bind is parsed by every command, a pid by few

    if not 0 < pid <= PID_MAX or not psutil.pid_exists(pid):
        raise UsageError(f"--target-pid {str(pid)[:40]}: no such process")
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
