"""Values that parse but mean nothing are refused in one line (issue 55's "nonsense
accepted"): NaN and infinity wherever a number is a limit, an empty gate, a PING
flood, a probe too short to judge, an empty request file."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grpcbench.base.errors import UsageError
from grpcbench.model.plan import LoadSettings
from grpcbench.model.thresholds import parse_threshold
from grpcbench.report.compare import parse_fail_on
from grpcbench.rpc.call import read_data
from grpcbench.services.params import Param

NOT_FINITE = ["nan", "NaN", "inf", "-inf", "Infinity"]


@pytest.mark.parametrize("value", NOT_FINITE)
@pytest.mark.parametrize("statistic", ["rps>=", "errors<"])
def test_a_threshold_s_limit_is_a_finite_number(statistic: str, value: str) -> None:
    with pytest.raises(UsageError, match="bad --threshold"):
        parse_threshold(statistic + value)


@pytest.mark.parametrize("text", ["", " ", "rps:inf%", "p99:+nan%", "rps:-0%"])
def test_an_empty_or_meaningless_gate_is_refused(text: str) -> None:
    with pytest.raises(UsageError, match="bad --fail-on"):
        parse_fail_on(text)


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_a_float_param_takes_finite_numbers_above_its_minimum(value: float) -> None:
    param = Param(float, "a delay", minimum=0)
    if math.isfinite(value) and value >= 0:
        assert param.check("delay", value) == value
    else:
        with pytest.raises(UsageError):
            param.check("delay", value)


@given(st.floats(min_value=0, max_value=1e6))
def test_keepalive_is_off_or_at_least_a_second(seconds: float) -> None:
    if seconds == 0 or seconds >= 1:
        assert LoadSettings(keepalive_s=seconds).keepalive_s == seconds
    else:
        with pytest.raises(UsageError, match="0 \\(off\\) or at least 1s"):
            LoadSettings(keepalive_s=seconds)


def test_an_empty_request_file_is_not_taken_for_an_empty_request(tmp_path: Path) -> None:
    empty = tmp_path / "r.json"
    for content in ("", "\n", "  \n\t"):
        empty.write_text(content)
        with pytest.raises(UsageError, match="is empty"):
            read_data(None, str(empty))
    empty.write_text("{}")
    assert read_data(None, str(empty)) == "{}"


def test_a_probe_too_short_to_judge_is_refused() -> None:
    from grpcbench.cli.commands import CapacityArgs, capacity_settings

    with pytest.raises(UsageError, match="--probe-duration '500ms': at least 1s"):
        capacity_settings(CapacityArgs(("p99<=1s",), 0.001, "5%", "500ms", "1s", 20, 1))
