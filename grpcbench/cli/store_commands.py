"""The commands of the results store: ``store`` (import results files) and
``history`` (a figure over a project's runs, with its change points)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rich.markup import escape

from grpcbench.base.errors import UsageError
from grpcbench.cli.consoles import Consoles

if TYPE_CHECKING:
    from grpcbench.history.change_points import ChangePoint

EXIT_NEW_REGRESSION = 99  # history --fail-on-regression: the newest run starts one


def project_name(given: str | None) -> str:
    import os

    from grpcbench.history.database import PROJECT_ENV
    from grpcbench.history.store import check_project

    name = given or os.environ.get(PROJECT_ENV, "")
    if not name:
        raise UsageError(f"no project: give --project NAME or set {PROJECT_ENV}")
    return check_project(name)


def store_files(files: list[Path], store: str | None, project: str | None,
                consoles: Consoles) -> int:  # fmt: skip
    """``grpcbench store FILE...``: results files (CI artifacts, say) into the store.
    Every file is read and checked before any is stored."""
    from grpcbench.base.input_files import read_input_text
    from grpcbench.history.database import store_url
    from grpcbench.history.store import Store, parse_results

    name = project_name(project)
    if not files:
        raise UsageError("store needs one or more results files")
    loaded = []
    for path in files:
        try:
            data = json.loads(read_input_text(str(path), "results file"))
        except (ValueError, RecursionError) as error:
            raise UsageError(f"cannot read results file {path}: {error}") from None
        except UsageError as error:
            raise UsageError(f"cannot read results file {path}: {error}") from None
        try:
            record = parse_results(data)
        except UsageError as error:
            raise UsageError(f"{path}: {error}") from None
        loaded.append((path, data, record))
    from grpcbench.history.history import refresh

    target = Store(store_url(store))
    for path, data, record in loaded:  # each parsed once, above
        saved = target.save(name, data, str(path), record)
        said = "stored as" if saved.new else "already stored as"
        consoles.out.print(f"{escape(str(path))}: {said} run {saved.id}", highlight=False)
    refresh(target, name)  # the change points, found once for the whole batch
    return 0


@dataclass(frozen=True)
class HistoryArgs:
    store: str | None
    project: str | None
    figure: str = "p50"
    series: str | None = None
    last: int = 30
    max_pvalue: float = 0.001
    min_effect: float = 3.0
    output_format: str = "text"
    fail_on_regression: bool = False
    control: str | None = None


def history(args: HistoryArgs, consoles: Consoles) -> int:
    """``grpcbench history``: the figure over the project's runs; 99 with
    ``--fail-on-regression`` when the newest run starts a regression of the server."""
    from grpcbench.history.database import store_url
    from grpcbench.history.history import check_figure, load_history
    from grpcbench.history.render import print_history
    from grpcbench.history.store import Store

    if args.output_format not in ("text", "json"):
        raise UsageError(f"bad --format {args.output_format!r}: text or json")
    if args.last < 1:
        raise UsageError(f"bad --last {args.last}: a positive number of runs")
    check_figure(args.figure)
    name = project_name(args.project)
    if args.control is not None:
        check_control(name, args.control, args.control)
    found = load_history(Store(store_url(args.store)), name, args.figure, args.series,
                         args.max_pvalue, args.min_effect, args.control)  # fmt: skip
    if args.output_format == "json":
        # Straight to the file: rich would read a thousand runs' JSON line by line.
        consoles.out.file.write(json.dumps(found.to_json(), indent=2) + "\n")
    else:
        print_history(consoles.out, found, args.last)
    newest = found.newest_regressions()
    if args.fail_on_regression and newest:
        consoles.err.print(
            f"[red]regression[/] of {found.label} at the newest run: "
            + "; ".join(f"{escape(c.series)} ({_standing(c)})" for c in newest),
            highlight=False,
        )
        return EXIT_NEW_REGRESSION
    return 0


def _standing(change: ChangePoint) -> str:
    if change.confirmed:
        return "started by the run before, confirmed by the newest"
    return "started by the newest run, unconfirmed: run once more to confirm or clear it"


def check_control(project: str, control: str, given: str) -> None:
    """A project's control (``history --control`` and ``web --control``, as ``given``)
    is another project."""
    if project == control:
        raise UsageError(f"bad --control {given!r}: a control is another project, run beside it")


def parse_controls(pairs: list[str]) -> dict[str, str]:
    """``--control PROJECT=CONTROL`` (repeatable) as project -> its control."""
    from grpcbench.history.store import check_project

    controls: dict[str, str] = {}
    for pair in pairs:
        project, equals, control = pair.partition("=")
        if not equals or not project or not control:
            raise UsageError(f"bad --control {pair!r}: PROJECT=CONTROL")
        check_control(project, control, pair)
        if project in controls:
            raise UsageError(f"bad --control {pair!r}: {project!r} already has a control")
        controls[check_project(project)] = check_project(control)
    return controls


def web(store: str | None, host: str, port: int, controls: list[str], consoles: Consoles) -> int:
    """``grpcbench web``: the store's dashboard until Ctrl-C."""
    from grpcbench.history.database import store_url
    from grpcbench.history.store import Store
    from grpcbench.history.web import serve

    if not 0 <= port < 65536:
        raise UsageError(f"bad --port {port}: 0 to 65535")
    against = parse_controls(controls)
    url = store_url(store)
    target = Store(url)

    def ready(address: str) -> None:
        from grpcbench.base.secrets import redact

        consoles.err.print(f"the dashboard of {escape(redact(url))} at {address} (Ctrl-C stops)",
                           highlight=False)  # fmt: skip

    serve(target, host, port, ready, against)
    return 0
