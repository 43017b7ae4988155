"""Running one command: its consoles, and every way it can end as one line and its
exit code (a ``OneLineError``, a bug, Ctrl-C, a standard output that went away)."""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable
from typing import NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from grpcbench.base import interrupts
from grpcbench.base.errors import OneLineError
from grpcbench.base.secrets import redact
from grpcbench.base.text import printable
from grpcbench.cli import consoles

# The parser's errors (click's, whichever click Typer runs on): reported as one line.
ClickException: type[Exception] = next(
    kind for kind in typer.BadParameter.__mro__ if kind.__name__ == "ClickException"
)


class _Stdout(Console):
    """Rich's console, but a closed pipe is raised (rich would exit 1 at once), so a run
    still writes its files and the CLI exits as SIGPIPE would (``_call``)."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError(errno.EPIPE, "standard output was closed")


# Piped output (files, CI logs) gets a wide console so tables are not squeezed.
stdout = _Stdout() if sys.stdout.isatty() else _Stdout(width=240)
stderr = Console(stderr=True, soft_wrap=True)


def call_command(command: Callable[..., int], *args: object) -> None:
    """Run one command; a ``OneLineError`` becomes one line and its exit code. Standard
    output is treated as a Unix tool treats it: a reader that went away (``| head -1``)
    ends the command quietly with 141, as SIGPIPE would; one that cannot take more
    (/dev/full) is one line and exit 2."""
    try:
        code = command(*args, consoles.Consoles(stdout, stderr))
    except BrokenPipeError:
        _quiet_stdout()
        raise typer.Exit(consoles.EXIT_PIPE_CLOSED) from None
    except OSError as error:
        if error.errno not in consoles.OUTPUT_ERRNOS:
            _internal(error)
        _quiet_stdout()
        reason = error.strerror or str(error)
        stderr.print(f"[bold red]grpcbench: error:[/] cannot write the output: {reason}")
        raise typer.Exit(2) from None
    except OneLineError as error:
        message = escape(printable(redact(str(error))))
        stderr.print(f"[bold red]grpcbench: error:[/] {message}", highlight=False)
        raise typer.Exit(error.exit_code) from None
    except KeyboardInterrupt:  # before a run started: nothing to stop or keep
        stderr.print("[yellow]interrupted[/]")
        raise typer.Exit(interrupts.exit_code()) from None
    except (typer.Exit, typer.Abort, ClickException):
        raise
    except Exception as bug:
        _internal(bug)
    raise typer.Exit(code)


def _internal(bug: Exception) -> NoReturn:
    """A bug: one line, its traceback in a file the line names, exit 70."""
    failure = consoles.internal_error(bug)
    stderr.print(f"[bold red]grpcbench: error:[/] {escape(redact(str(failure)))}")
    raise typer.Exit(failure.exit_code) from None


def _quiet_stdout() -> None:
    """Standard output is gone: the interpreter's last flush must not fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
