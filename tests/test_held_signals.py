"""A stop signal while a run's results are written is held, not acted on
(``interrupts.held_while_writing``); tests/test_fault_matrix.py sends them to a real run."""

from __future__ import annotations

import signal

import pytest

from grpcbench.base import interrupts


@pytest.mark.parametrize(
    ("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129), (signal.SIGQUIT, 131)]
)
def test_a_stop_signal_while_writing_is_held_and_gives_its_exit_code(
    monkeypatch: pytest.MonkeyPatch, sig: int, code: int
) -> None:
    monkeypatch.setattr(interrupts, "_received", None)
    before = signal.getsignal(sig)
    with interrupts.held_while_writing() as held:
        signal.raise_signal(sig)  # would end the process, or raise, if it were not held
        signal.raise_signal(signal.SIGINT)  # a later one changes nothing
        written = True
    assert written and held.signum == sig
    assert interrupts.exit_code() == code
    assert signal.getsignal(sig) == before  # the handlers of before, again


def test_no_signal_while_writing_holds_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(interrupts, "_received", None)
    with interrupts.held_while_writing() as held:
        pass
    assert held.signum is None and interrupts.exit_code() == 130
