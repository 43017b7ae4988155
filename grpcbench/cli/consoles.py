"""What every command shares and nothing heavy: its two consoles, the exit codes of
its output's failures, and a bug told as one line. Kept apart from ``commands`` so
that the commands that run nothing (``history``, ``show``, ``--help``) do not import
the runner's modules to start."""

from __future__ import annotations

import errno
import tempfile
import traceback
from dataclasses import dataclass, field

from rich.console import Console

from grpcbench.base.errors import InternalError

EXIT_REGRESSION = 1  # compare --fail-on found a regression
EXIT_PIPE_CLOSED = 141  # 128 + SIGPIPE: standard output's reader went away (| head -1)
# Standard output cannot take more (/dev/full, a disk or tty gone): one line, exit 2.
OUTPUT_ERRNOS = (errno.ENOSPC, errno.EIO, errno.EDQUOT, errno.EBADF)


@dataclass
class Consoles:
    """Tables and results go to ``out``; progress, messages and errors to ``err``."""

    out: Console
    err: Console = field(default_factory=lambda: Console(stderr=True, soft_wrap=True))


def internal_error(bug: Exception) -> InternalError:
    """A bug as one line; its traceback goes to a file the line names."""
    with tempfile.NamedTemporaryFile(
        "w", prefix="grpcbench-traceback-", suffix=".txt", delete=False
    ) as handle:
        traceback.print_exception(bug, file=handle)
    return InternalError(
        f"internal error {type(bug).__name__}: {bug} (a bug in grpcbench; the traceback is in"
        f" {handle.name})"
    )
