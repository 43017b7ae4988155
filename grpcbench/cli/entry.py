"""The ``grpcbench`` command: ``--version`` and ``--help`` answered before the command
line is built.

Building the command line imports every option's declaration and what they name
(0.5 s of imports); a version line needs none of it, and is what scripts and bug
reports run most (issue 52: ``--version`` in at most 0.2 s).
"""

from __future__ import annotations

import os
import sys

from grpcbench.cli.command_summaries import asks_for_help, print_help
from grpcbench.cli.version_flag import version_spelled


def main() -> None:
    # gRPC's C core logs every failed TLS handshake and retry at INFO on stderr, and
    # reads this when it is imported: grpcbench says what went wrong in one line instead
    # (a user's setting wins).
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
    if version_spelled(sys.argv)[1:] == ["--version"]:
        from grpcbench.model.metadata import versions_line

        print(versions_line())
        return
    if asks_for_help(sys.argv):  # the commands' list: no option needs building for it
        print_help()
        return
    from grpcbench.base.child_setup import adopt_orphans
    from grpcbench.cli.app import main as command_line

    adopt_orphans()  # what a flow daemonizes in the pre-flight call stays ours to stop
    command_line()
