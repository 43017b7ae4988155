"""Text from outside (a server's grpc-message, a results file's names, a scenario's)
made safe to print: control characters shown as escapes, never sent to the terminal,
where ESC starts a sequence that can recolour, retitle or rewrite what is shown."""

from __future__ import annotations

import re

# C0 controls but tab and newline, DEL, and C1 controls (0x9b is a one-byte CSI).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` with each control character as its escape (``\\x1b``)."""
    if not _CONTROL.search(text):
        return text
    return _CONTROL.sub(lambda match: f"\\x{ord(match.group()):02x}", text)
