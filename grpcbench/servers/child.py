"""Entry point of a server subprocess: ``python -m grpcbench.servers.child ...``.

It builds the server of the requested kind, binds ``--host`` (127.0.0.1 unless
the user asked otherwise with ``run --bind``), then prints one
``READY {"port": N}`` line on stdout; the launcher then waits for the gRPC health
service to answer SERVING. SIGTERM triggers a graceful stop.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from typing import Any

from grpcbench.base.child_setup import announce_ready, setup_child

# Seconds in-flight RPCs get to finish after SIGTERM.
STOP_GRACE_SECONDS = 2.0

__all__ = ["announce_ready", "bind_error", "main"]


def bind_error(host: str, port: int, error: BaseException) -> SystemExit:
    """Binding failed: the launcher shows this stderr line to the user."""
    sys.stderr.write(f"cannot listen on {host}:{port}: address in use or unavailable ({error})\n")
    return SystemExit(3)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="grpcbench-server")
    parser.add_argument("--spec", required=True)
    parser.add_argument("--service", required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--cpus", default="")
    args = parser.parse_args(argv)
    # Service params come as one JSON line on stdin, never on the command line:
    # they may hold secrets (a password in a MongoDB URI), which `ps` would show.
    params: dict[str, Any] = json.loads(sys.stdin.readline() or "{}")
    cpus = [int(c) for c in args.cpus.split(",") if c]
    setup_child(cpus)

    from grpcbench.servers.spec import parse_server_spec
    from grpcbench.services.registry import load_service

    spec = parse_server_spec(args.spec)
    service = load_service(args.service)
    module = importlib.import_module(spec.info.module)
    module.serve(service, spec, params, args.host, args.port)


if __name__ == "__main__":
    main()
