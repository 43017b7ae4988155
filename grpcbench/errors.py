"""The one exception type that reaches the user as a single line.

Anything raised as ``UsageError`` is printed as ``grpcbench: error: <message>``
with a non-zero exit code and no traceback; anything else is a bug.
"""


class UsageError(Exception):
    """Bad input or an environment problem the user can fix (one clear line)."""

    exit_code = 2


class ServerStartError(UsageError):
    """A server process died or never became ready; carries its stderr tail."""

    exit_code = 3
