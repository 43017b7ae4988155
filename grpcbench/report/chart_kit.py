"""What every chart shares: the Chart, matplotlib (an optional extra, imported lazily),
a legend beside the plot, log axes with plain numbers, and rendering to SVG and PNG."""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any

from grpcbench.base.errors import UsageError


@dataclass(frozen=True)
class Chart:
    name: str  # file stem: "throughput", "latency", ...
    title: str
    svg: str
    png: bytes


def require_matplotlib() -> None:
    pyplot()


def pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        # Text stays text in SVG: searchable in the report, and smaller.
        matplotlib.rcParams["svg.fonttype"] = "none"
        import matplotlib.pyplot as plt
    except ImportError:
        raise UsageError("charts need matplotlib: pip install 'grpcbench[charts]'") from None
    return plt


def finish_chart(plt: Any, figure: Any, name: str, title: str) -> Chart:
    figure.suptitle(title)
    figure.tight_layout()
    svg, png = io.StringIO(), io.BytesIO()
    # "tight": the legends sit outside the plot area, and must stay in the picture.
    figure.savefig(svg, format="svg", bbox_inches="tight")
    figure.savefig(png, format="png", dpi=110, bbox_inches="tight")
    plt.close(figure)
    return Chart(name, title, svg.getvalue(), png.getvalue())


def legend_outside(axes: Any) -> None:
    """Legends beside the plot, never over the data."""
    axes.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)


def log_scale(axes: Any, axis: str = "y") -> None:
    """Log scale with plain numbers (12, 30, 100) instead of 1.2 x 10^1."""
    from matplotlib.ticker import LogLocator, NullFormatter, ScalarFormatter

    getattr(axes, f"set_{axis}scale")("log")
    target = axes.yaxis if axis == "y" else axes.xaxis
    target.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    target.set_major_formatter(ScalarFormatter())
    target.set_minor_formatter(NullFormatter())
