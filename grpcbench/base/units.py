"""Human units, as the seed printed them: "0.41 ms", "2.76 s", "2781.69"."""

from __future__ import annotations


def format_latency_us(micros: float) -> str:
    if micros >= 1_000_000:
        return f"{micros / 1_000_000:.2f} s"
    return f"{micros / 1000:.2f} ms"


def format_seconds(seconds: float) -> str:
    return format_latency_us(seconds * 1_000_000)


def format_bytes(count: int) -> str:
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.1f} {unit}" if unit != "B" else f"{int(value)} B"
        value /= 1024
    raise AssertionError("unreachable")


def format_percent(fraction: float) -> str:
    return f"{fraction * 100:.0f}%"


def format_cpu_seconds(seconds: float) -> str:
    """CPU time in seconds: the kernel counts it in 10 ms ticks, so ms digits would lie."""
    return f"{seconds:.2f} s"
