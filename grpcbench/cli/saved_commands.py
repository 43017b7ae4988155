"""The commands that read saved results: ``show``, ``compare`` and ``report``.

None of them starts a server or a load: they read a results file (or two) and
print, gate or draw it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from rich.markup import escape

from grpcbench.base.errors import UsageError
from grpcbench.cli.consoles import EXIT_REGRESSION, Consoles


def show(results: Path, markdown: bool, consoles: Consoles) -> int:
    """``grpcbench show``: saved results as tables (or markdown), nothing run."""
    from grpcbench.model.results_file import load_run
    from grpcbench.report.capacity import record_tables
    from grpcbench.report.console import print_comparison_tables, print_summary
    from grpcbench.report.markdown import run_to_markdown

    record = load_run(results)
    if markdown:
        consoles.out.out(run_to_markdown(record), highlight=False)
        return 0
    named = record.options.describe_run()
    consoles.err.print(
        f"{results}: {escape(named) + ', ' if named else ''}{record.status}, started"
        f" {record.started_at}",
        highlight=False,
    )
    print_comparison_tables(consoles.out, record_tables(record))
    if record.capacity is None:
        print_summary(consoles.out, record.levels)
    for failure in record.level_errors:
        consoles.err.print(f"[yellow]not measured:[/] {escape(failure.describe())}")
    return 0


@dataclass(frozen=True)
class CompareArgs:
    baseline: Path
    contender: Path
    fail_on: str | None = None
    alpha: float = 0.05
    significance: bool = True  # --no-significance gates on thresholds alone
    format: str = "text"  # text, markdown or json


def compare(args: CompareArgs, consoles: Consoles) -> int:
    """``grpcbench compare``: B / A per figure with its significance; 1 on a regression."""
    from grpcbench.model.results_file import load_run
    from grpcbench.report.compare import (
        compare_runs,
        parse_fail_on,
        regressions,
        to_json,
        to_markdown,
    )

    if not 0 < args.alpha < 1:
        raise UsageError(f"bad --alpha {args.alpha}: a probability between 0 and 1")
    if args.format not in ("text", "markdown", "json"):
        raise UsageError(f"bad --format {args.format!r} (text, markdown or json)")
    # Given, even empty, it is a gate: an empty one is refused, never a gate turned off.
    thresholds = parse_fail_on(args.fail_on) if args.fail_on is not None else []
    differences = compare_runs(load_run(args.baseline), load_run(args.contender), alpha=args.alpha)
    if args.format == "json":
        consoles.out.print_json(json.dumps(to_json(differences)))
    elif args.format == "markdown":
        consoles.out.out(to_markdown(differences), highlight=False)
    else:
        for difference in differences:
            consoles.out.print(escape(difference.describe()), highlight=False, soft_wrap=True)
    gate = regressions(differences, thresholds, require_significance=args.significance)
    for line in gate.untestable:
        consoles.err.print(
            f"[yellow]not gated:[/] {escape(line)}: one run a side, so no run-to-run variance"
            " to test (use --repeat, or --no-significance to gate on the threshold alone)"
        )
    for line in gate.failed:
        consoles.err.print(f"[red]regression:[/] {escape(line)}")
    return EXIT_REGRESSION if gate.failed else 0


def report(
    results: Path, html_path: Path | None, png: Path | None, svg: Path | None, consoles: Consoles
) -> int:
    """``grpcbench report``: charts and an offline HTML report from saved results."""
    from grpcbench.base.output_files import check_apart, write_atomically
    from grpcbench.model.results_file import load_run
    from grpcbench.report.chart_kit import require_matplotlib
    from grpcbench.report.charts import render_charts, write_images
    from grpcbench.report.exporters import check_writable
    from grpcbench.report.html import render_html

    if not (html_path or png or svg):
        raise UsageError("nothing to write: give --html FILE, --png DIR and/or --svg DIR")
    require_matplotlib()
    if html_path:
        check_writable("--html", html_path)
        check_apart([("--html", html_path)], [("report's results file", results)])
    record = load_run(results)
    charts = render_charts(record)
    if html_path:
        write_atomically(html_path, render_html(record, charts))
        consoles.err.print(f"wrote {html_path}", highlight=False)
    for directory, fmt in ((png, "png"), (svg, "svg")):
        if directory:
            written = write_images(charts, directory, [fmt])
            consoles.err.print(
                f"wrote {len(written)} {fmt.upper()} charts to {directory}", highlight=False
            )
    return 0
