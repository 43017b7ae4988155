"""What Dask would log on stderr that a cluster level says in one line instead."""

from __future__ import annotations

import logging
import os


class _DaskTaskNoise(logging.Filter):
    """Drops asyncio's "exception was never retrieved" for Dask's own tasks: a worker
    killed mid-level leaves the scheduler (in this process for local:N) a request it
    can no longer answer, whose TimeoutError asyncio then prints with its traceback;
    the level error names the worker in one line. Any other task's is kept."""

    def filter(self, record: logging.LogRecord) -> bool:
        if "exception was never retrieved" not in str(record.msg) or not record.exc_info:
            return True
        trace = record.exc_info[2]
        while trace is not None:
            if f"{os.sep}distributed{os.sep}" in trace.tb_frame.f_code.co_filename:
                return False
            trace = trace.tb_next
        return True


def quiet_dask() -> None:
    """A lost scheduler is said in one line (a level error); Dask's client would log
    its reconnection attempts and their tracebacks on stderr besides."""
    for name in ("distributed.client", "distributed.core", "distributed.comm"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    asyncio_logger = logging.getLogger("asyncio")
    if not any(isinstance(f, _DaskTaskNoise) for f in asyncio_logger.filters):
        asyncio_logger.addFilter(_DaskTaskNoise())
