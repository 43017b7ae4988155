"""Text from outside never reaches the terminal or a markdown file as a control
sequence: a server's error message and a results file's names are shown escaped."""

from __future__ import annotations

import io
import re
from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from grpcbench.base.text import printable
from grpcbench.model.results import RecordedOptions, RunRecord
from grpcbench.report.console import print_tables
from grpcbench.report.markdown import run_to_markdown
from tests.support.factories import level

CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


@given(st.text())
def test_printable_leaves_no_control_character_and_keeps_the_rest(text: str) -> None:
    shown = printable(text)
    assert not CONTROL.search(shown)
    assert CONTROL.sub("", text) == CONTROL.sub("", re.sub(r"\\x[0-9a-f]{2}", "", shown)) or (
        "\\x" in text  # a literal backslash-x in the text itself
    )


@given(st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=40))
def test_hostile_names_and_messages_are_escaped_in_tables_and_markdown(hostile: str) -> None:
    evil = "\x1b]0;owned\x07\x1b[31m" + hostile
    result = level("grpclib", statuses={"OK": 2, "Unavailable": 2})
    result = replace(
        result,
        scenario=evil,
        server="grpclib" + evil,
        measured=replace(result.measured, errors={"Unavailable: " + evil: 2}),
    )
    record = RunRecord(RecordedOptions(scenario=evil), {}, levels=[result])
    markdown = run_to_markdown(record)
    assert "\x1b" not in markdown and "\x07" not in markdown
    out = io.StringIO()
    print_tables(Console(file=out, width=300, force_terminal=False, color_system=None),
                 record.levels, [])  # fmt: skip
    assert not CONTROL.search(out.getvalue().replace("\n", ""))


def test_an_interval_where_no_call_finished_says_so() -> None:
    """Not "0 req/s, p50 0.00 ms, p99 0.00 ms", which reads as a perfect second."""
    from grpcbench.cli.console_events import interval_line
    from grpcbench.model.intervals import IntervalFigures
    from grpcbench.stats.histogram import LatencyRecorder

    empty = LatencyRecorder().summary()
    idle = IntervalFigures(3, 3.0, 4.0, 0, 0, empty, offered=200.0, in_flight=12)
    said = "   3.0-4.0 s: [yellow]no call finished[/] of 200/s offered, 12 in flight"
    assert interval_line(idle) == said
    busy = LatencyRecorder()
    busy.record(2_000)
    one = IntervalFigures(3, 3.0, 4.0, 1, 0, busy.summary())
    assert "1 req/s" in interval_line(one) and "no call" not in interval_line(one)
