"""``--cluster local:N``: a Dask ``LocalCluster`` of N worker processes on this machine.

Its processes are grpcbench's children like any other, so they follow the
same rules: each worker process (the nannies live in grpcbench's own process)
asks for the parent-death signal as it starts (``dask_setup`` below, loaded
as the workers' preload), so even ``kill -9`` of grpcbench takes them along, and
ignores a terminal's Ctrl-C and Ctrl-\\ as the other children do (grpcbench stops
them and keeps what was measured); they start with the equivalent of
``python -P`` (``PYTHONSAFEPATH``), so the current directory cannot shadow a
dependency; and they listen on 127.0.0.1 only, with no dashboard.
"""

from __future__ import annotations

import logging
import os
import signal
from typing import Any

from grpcbench.base.child_setup import (
    TERMINAL_SIGNALS,
    adopt_orphans,
    ignore_terminal_signals,
    set_parent_death_signal,
)

PRELOAD = "grpcbench.load.local_cluster"


def dask_setup(process: Any) -> None:
    """Dask's preload hook, run in each worker process as it starts."""
    set_parent_death_signal()
    adopt_orphans()
    ignore_terminal_signals()  # grpcbench stops its workers itself, as its other children


def start_local_cluster(workers: int) -> Any:
    from distributed import LocalCluster

    # The scheduler and nannies live in this process: their INFO lines are not ours to print.
    logging.getLogger("distributed").setLevel(logging.ERROR)
    saved = os.environ.get("PYTHONSAFEPATH")
    os.environ["PYTHONSAFEPATH"] = "1"  # inherited by the processes the cluster spawns
    # Blocked while the cluster starts, so that the threads it starts and the processes
    # they spawn (workers, multiprocessing's resource tracker) are born with them
    # blocked: a Ctrl-C before a worker's preload has run stays pending, not fatal.
    # This thread's own mask is restored below, and a signal that came meanwhile is
    # then delivered to it.
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, TERMINAL_SIGNALS)
    try:
        return LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            # The scheduler's HTTP server always starts: on loopback, on any free port
            # (None meant :8787, and a warning when another cluster had it).
            dashboard_address="127.0.0.1:0",
            silence_logs=logging.ERROR,
            preload=[PRELOAD],
        )
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        if saved is None:
            os.environ.pop("PYTHONSAFEPATH", None)
        else:
            os.environ["PYTHONSAFEPATH"] = saved
