"""How to read a driver's columns: the line printed under every table that has one.

Report-layer text, keyed by driver name (``LoadResult.driver``), so the tables
never import the load drivers' catalogue. A driver without an entry gets no note.
"""

from __future__ import annotations

DRIVER_NOTES: dict[str, str] = {
    "ghz": (
        "ghz columns: latencies of every call, failed ones included (grpcbench passes"
        " --count-errors and reads ghz's per-call records, like the built-in driver);"
        " neither driver corrects for coordinated omission (both are closed loops)."
    ),
    "dask": (
        "dask columns: the built-in engine on several Dask workers (--cluster) that"
        " warmed up, then measured from one common start; counts add and histograms"
        " merge exactly."
    ),
    "fake": "fake columns: synthetic figures from the fake driver, not measurements.",
}
