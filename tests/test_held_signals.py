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


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGQUIT])
def test_an_error_the_stop_itself_caused_is_an_interrupt(
    monkeypatch: pytest.MonkeyPatch, sig: int
) -> None:
    """A run that ends in an error after a stop signal (a child the group's Ctrl-\\
    killed as it started, noticed before the cancellation) was interrupted: its exit
    code is the signal's, not the error's."""
    import asyncio

    monkeypatch.setattr(interrupts, "_received", None)
    before = {stop: signal.getsignal(stop) for stop in interrupts.STOP_SIGNALS}
    interrupts.install()

    async def run() -> None:
        try:
            signal.raise_signal(sig)
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            raise RuntimeError("the server exited as it started") from None

    try:
        with pytest.raises(KeyboardInterrupt):
            interrupts.run_until_interrupted(run())
        assert interrupts.exit_code() == 128 + sig
    finally:  # the command leaves them ignored (it is ending); this process goes on
        for stop, handler in before.items():
            signal.signal(stop, handler)


def test_an_error_without_a_signal_stays_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    monkeypatch.setattr(interrupts, "_received", None)

    async def run() -> None:
        await asyncio.sleep(0)
        raise RuntimeError("a real failure")

    with pytest.raises(RuntimeError, match="a real failure"):
        interrupts.run_until_interrupted(run())
