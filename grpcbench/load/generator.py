"""Entry point of a load-generator process: ``python -m grpcbench.load.generator``.

Reads ``GeneratorJob`` s as JSON lines on stdin, one a level, until its stdin ends
(a driver keeps the process for the run's levels: ``load.generator_process``), and
writes JSON lines to the pipe ``--pipe FD`` (its parent's, as pyperf's workers do;
stdout without it):
``{"event": "measuring"}`` when warm-up ends, ``{"event": "progress", "done": N}``
while measuring (and ``{"event": "interval", ...}`` as each ``--interval`` closes),
``{"event": "measured"}`` when the measured phase ends, then ``{"event": "result",
...}`` or ``{"event": "error", ...}``.
A pipe of its own means a workload that prints, logs or writes to stdout
changes nothing (``tests/test_generator_pipe.py``).
Running in its own process keeps the generator off the server's core and lets
several generators run side by side (their results merge).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, TextIO

from grpcbench.base.child_setup import pin_to, setup_child
from grpcbench.base.errors import OneLineError
from grpcbench.model.load_result import GeneratorJob
from grpcbench.observe.memory_peak import reset_peak_rss


class EventWriter:
    """JSON lines to the parent, one flushed line per event."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def __call__(self, event: str, **fields: Any) -> None:
        self.stream.write(json.dumps({"event": event, **fields}) + "\n")
        self.stream.flush()


def main() -> None:
    if sys.argv[1:2] == ["--pipe"]:
        emit = EventWriter(os.fdopen(int(sys.argv[2]), "w", encoding="utf-8"))
    else:
        emit = EventWriter(sys.stdout)
    setup_child(None)  # tied to our parent, deaf to Ctrl-C: from now, not from a first job
    # The engine is imported before the first job is read: a driver may start us
    # early (``BuiltinDriver.warm``), and this 0.3 s then passes while the run starts
    # its servers, not at the start of the first level.
    from grpcbench.load.engine import run_level
    from grpcbench.load.loop_watchdog import watched
    from grpcbench.servers.asyncio_loop import run

    for line in sys.stdin:  # one job a line, until the parent closes our stdin
        spec = GeneratorJob.from_json(json.loads(line))
        pin_to(spec.settings.client_cpus)
        reset_peak_rss()
        level = run_level(
            spec,
            on_measurement_start=lambda: emit("measuring"),
            on_progress=lambda done, errors: emit("progress", done=done, errors=errors),
            on_interval=lambda figures: emit("interval", figures=figures.to_json()),
            on_measurement_end=lambda: emit("measured"),
        )
        try:
            result = run(
                watched(
                    level,
                    lambda message: emit("error", message=message),
                    spec.settings.stall_limit_s,
                    spec.settings.generator_memory_bytes,
                ),
                use_uvloop=spec.settings.client_loop == "uvloop",
            )
        except OneLineError as error:
            emit("error", message=str(error))
            sys.exit(2)  # never reused after a failure
        forked = _stop_forked_copies(spec)
        if forked:
            emit("error", message=forked)
            sys.exit(2)
        emit("result", result=result.to_json())


def _stop_forked_copies(spec: GeneratorJob) -> str:
    """Copies of this process that user code made with os.fork(), stopped; what to say
    of them ("" when there are none): a copy runs the level's loop too, on the same
    connections and the same pipe, so the level's figures are not the generator's."""
    from grpcbench.base.processes import stop_forked_copies

    copies = stop_forked_copies()
    if not copies:
        return ""
    who = f"the flow {spec.flow['function']}" if spec.flow else "the level's workload"
    pids = ", ".join(map(str, copies[:3])) + (", ..." if len(copies) > 3 else "")
    return (
        f"{who} forked the generator {len(copies)} time(s) (pid {pids}): user code must not"
        " fork; the copies were stopped"
    )


if __name__ == "__main__":
    main()
