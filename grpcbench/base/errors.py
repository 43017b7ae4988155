"""The errors that reach the user as a single line, each with its exit code.

Anything raised as a ``OneLineError`` is printed as ``grpcbench: error: <message>``
with its non-zero exit code and no traceback; anything else is a bug (reported
as an ``InternalError``). ``UsageError`` is the common case: bad input, or an
environment problem the user can fix.
"""


class OneLineError(Exception):
    """An expected failure: one clear line and ``exit_code``, never a traceback."""

    exit_code = 1


class UsageError(OneLineError):
    """Bad input or an environment problem the user can fix (one clear line)."""

    exit_code = 2


class DriverError(OneLineError):
    """A load driver could not measure a level (generator crashed, ghz failed).

    The runner records it, keeps going with the other levels and servers, and
    the run ends with a non-zero exit code."""

    exit_code = 4


class InternalError(OneLineError):
    """A bug in grpcbench: the run still ends with its tables and a saved "failed"
    status, and the traceback goes to a file named in the one-line message."""

    exit_code = 70  # EX_SOFTWARE


class PreflightError(OneLineError):
    """The target refused the pre-flight call (or a started server its TLS probe):
    nothing was measured (exit 5)."""

    exit_code = 5


class ServerStartError(OneLineError):
    """A server process died or never became ready; carries its stderr tail."""

    exit_code = 3
