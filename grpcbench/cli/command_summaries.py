"""``grpcbench --help`` without building the command line: the commands and their
one-line summaries, declared here once (``cli.app`` gives its commands these
summaries, and a test holds the two helps equal).

Building the whole command line imports every option's declaration and what they
name; the list of commands needs none of it (issue 52: ``--help`` in at most 0.2 s).
"""

from __future__ import annotations

APP_HELP = "Benchmark Python gRPC servers (grpcio, grpclib, grpc.aio) side by side."
VERSION_HELP = "Print the versions of grpcbench, Python, grpcio, grpclib, protobuf, uvloop."
HELP_OPTIONS = ["-h", "--help", "--help-long"]  # ghz's -h too

# Each command, in the order `--help` lists them, with its docstring's first sentence
# (whole: click would cut a summary at 45 characters).
SUMMARIES: dict[str, str] = {
    "run": "Run a scenario on every server kind at every concurrency level and print the tables.",
    "capacity": "Search the highest open-loop rate each server kind serves within an SLO.",
    "serve": "Run one server in the foreground (with health and reflection) until Ctrl-C.",
    "show": "Re-render saved results as tables (or markdown) without running anything.",
    "compare": "Compare two results files: ratio B / A of each figure, with its significance.",
    "report": "Charts and an offline HTML report from saved results (needs the charts extra).",
    "store": "Keep results files (CI artifacts, say) in a results store; each once.",
    "history": "A figure over a project's runs, per level and server kind, with its change points.",
    "web": "Serve the store's dashboard: projects, histories with change points, runs, an"
    " ingest API for CI (pip install 'grpcbench[web]').",
    "servers": "List the server kinds and their spec options.",
    "list": "List a server's services, or one service's methods (grpcurl's list).",
    "describe": "Show a service, method, message or enum as .proto text (grpcurl's describe).",
    "scenarios": "List the scenarios (bundled .toml files).",
}


def asks_for_help(argv: list[str]) -> bool:
    """``grpcbench --help``, and nothing else (``-h`` and ``--help-long``, ghz's, take the
    whole command line, which reads them as ghz's lines do)."""
    return argv[1:] == ["--help"]


def print_help() -> None:
    """The top-level help, as the whole command line prints it (its exit: 0)."""
    import typer
    from rich.markup import escape

    app = typer.Typer(
        add_completion=True, context_settings={"help_option_names": HELP_OPTIONS},
        pretty_exceptions_enable=False, help=APP_HELP,
    )  # fmt: skip

    @app.callback()
    def main_options(version: bool = typer.Option(False, "--version", help=VERSION_HELP)) -> None:
        pass

    for name, summary in SUMMARIES.items():
        app.command(name, short_help=escape(summary))(lambda: None)
    app(["--help"], prog_name="grpcbench")
