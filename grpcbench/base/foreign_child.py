"""``python -P -m grpcbench.base.foreign_child [--cpus 0,1] -- PROGRAM ARGS...``: tie a program
that is not ours (ghz, java, maven, a Go server) to grpcbench's life, then become it.

Why not a ``preexec_fn``: that makes Python ``fork()`` our process, and when our
process already runs gRPC (the runner's pre-flight call, a test's server), gRPC's
fork handlers leave the forked child with a poller thread on a descriptor that is
then closed before ``exec``; about one child in ten died with SIGABRT or SIGSEGV
(``epoll_wait error: Bad file descriptor``). Without a ``preexec_fn`` Python
starts children with ``vfork()``, which runs no fork handlers, and this small
launcher does the set-up in a fresh process instead: the parent-death signal
(kept across ``exec``), the re-parenting check, and the CPU pinning (inherited by
every thread the program starts). Our own Python children do the same set-up
themselves (``childproc.setup_child``).
"""

from __future__ import annotations

import os
import sys

from grpcbench.base.child_setup import die_with_parent, pin_to

EXIT_CANNOT_EXEC = 127


def launcher_argv(program_argv: list[str], cpus: tuple[int, ...] = ()) -> list[str]:
    """The command line that runs ``program_argv`` through this launcher."""
    pinning = ["--cpus", ",".join(map(str, cpus))] if cpus else []
    return [sys.executable, "-P", "-m", __name__, *pinning, "--", *program_argv]


def main(argv: list[str]) -> None:
    cpus: set[int] = set()
    if argv[:1] == ["--cpus"]:
        cpus = {int(cpu) for cpu in argv[1].split(",")}
        argv = argv[2:]
    program = argv[1:] if argv[:1] == ["--"] else []
    if not program:
        sys.stderr.write(
            "usage: python -m grpcbench.base.foreign_child [--cpus 0,1] -- PROGRAM ARGS...\n"
        )
        sys.exit(EXIT_CANNOT_EXEC)
    die_with_parent()
    try:
        pin_to(cpus)
    except OSError as error:
        sys.stderr.write(f"cannot pin {program[0]} to CPUs {sorted(cpus)}: {error.strerror}\n")
        sys.exit(EXIT_CANNOT_EXEC)
    try:
        os.execvp(program[0], program)
    except OSError as error:
        sys.stderr.write(f"cannot run {program[0]}: {error.strerror}\n")
        sys.exit(EXIT_CANNOT_EXEC)


if __name__ == "__main__":
    main(sys.argv[1:])
