"""Where the top-level data directories (``scenarios/``, ``protos/``) are at run time.

In the repository they sit next to the package; the wheel carries them as
``grpcbench/_data/<name>``. The wheel's copy wins when both exist.
"""

from __future__ import annotations

from pathlib import Path

from grpcbench.base.errors import UsageError

_PACKAGE_DIR = Path(__file__).resolve().parents[1]  # grpcbench/


def data_dirs(name: str) -> list[Path]:
    candidates = (_PACKAGE_DIR / "_data" / name, _PACKAGE_DIR.parent / name)
    return [path for path in candidates if path.is_dir()]


def protos_dir() -> Path:
    found = data_dirs("protos")
    if not found:
        raise UsageError("the .proto files are missing from this installation of grpcbench")
    return found[0]
