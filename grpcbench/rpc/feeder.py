"""Request feeders: ``-D requests.jsonl`` (one request per line) or ``-D requests.csv``.

A feeder gives each call the next line of a file, as JSON text for ``CallMessages``
(templates still apply per line). The file is memory-mapped, never read into
Python objects: a 10 GB file costs its page cache, not the generator's heap, and
the first call does not wait for it to load. How lines are taken (``--feed``):
- ``sequential``: in order, from the top again at the end;
- ``random``: a line drawn at random per call (the line starts are indexed once,
  8 bytes per line);
- ``once``: in order, each line once; the level ends when the data runs out.

With P generator processes, process i of P takes lines i, i+P, i+2P, ... (in
``sequential`` and ``once``), so together they send each line once per pass.

CSV: the header names the request's fields (``location.latitude`` for a nested
one); each row is a request. Values are JSON strings, which protobuf's JSON
parser reads for every numeric and enum field; ``true``/``false`` become booleans
for the request's bool fields (``bool_fields``, named as the header names them).
"""

from __future__ import annotations

import csv
import io
import json
import mmap
import os
import random
from array import array
from collections.abc import Iterator
from functools import cached_property
from typing import Any

from grpcbench.base.errors import UsageError

MODES = ("sequential", "random", "once")
FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv"}


def feed_format(path: str) -> str | None:
    """The feeder format a -D file's name says (None: an ordinary JSON file)."""
    return FORMATS.get(os.path.splitext(path)[1].lower())


class FeedExhausted(Exception):
    """``once``: every line of this process's share was sent."""


class Feeder:
    """One generator process's view of a feeder file."""

    def __init__(
        self, path: str, mode: str, index: int = 0, count: int = 1, seed: int | None = None,
        bool_fields: frozenset[str] = frozenset(), label: str = "-D",
    ) -> None:  # fmt: skip
        """``label``: how errors name where the file came from (-D, or a flow's client.row)."""
        self.path = path
        self.label = label
        self.bool_fields = bool_fields
        self.mode = mode
        self.csv = feed_format(path) == "csv"
        self.index, self.count = index, count
        self.random = random.Random(seed)
        try:
            with open(path, "rb") as file:
                size = os.fstat(file.fileno()).st_size
                self.data = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
        except OSError as error:
            raise UsageError(f"cannot read {label} {path}: {error.strerror}") from None
        self.header: list[str] = []
        self.start = 0  # where the first request line begins (after a CSV header)
        if self.csv:
            first, self.start = self._line_at(0)
            self.header = next(csv.reader(io.StringIO(self._text(first, 0).rstrip("\r"))), [])
        self.position = self.start
        self.taken_at = self.start  # where the line taken last begins (for errors)
        self.lines: array[int] | None = None  # line starts, for random
        self.sent = 0
        if mode == "random":
            self.lines = array("Q", self._starts())
        self._skip(index)  # this process's first line

    def _starts(self) -> Iterator[int]:
        position = self.start
        while position < len(self.data):
            line, after = self._line_at(position)
            if line.strip():
                yield position
            position = after

    def _line_at(self, position: int) -> tuple[bytes, int]:
        """The line (a CSV row: newlines inside a quoted field are its own) that begins
        at ``position``, and where the next begins."""
        data = self.data
        end = data.find(b"\n", position)
        end = len(data) if end < 0 else end
        # An odd number of quotes so far: the newline is inside a quoted field.
        while self.csv and end < len(data) and data[position:end].count(b'"') % 2:
            following = data.find(b"\n", end + 1)
            end = len(data) if following < 0 else following
        return bytes(data[position:end]), end + 1

    def _skip(self, lines: int) -> None:
        for _ in range(lines):
            if self._take_sequential(wrap=self.mode != "once") is None:
                return

    def _take_sequential(self, wrap: bool) -> bytes | None:
        wrapped = False
        while True:
            if self.position >= len(self.data):
                if not wrap or wrapped:
                    return None
                self.position, wrapped = self.start, True
            self.taken_at = self.position
            line, self.position = self._line_at(self.position)
            if line.strip():
                return line

    def next_text(self) -> str:
        """The next request's JSON text; ``FeedExhausted`` once a ``once`` feeder is done."""
        if self.lines is not None:
            if not self.lines:
                raise FeedExhausted
            self.taken_at = self.lines[self.random.randrange(len(self.lines))]
            line, _ = self._line_at(self.taken_at)
        else:
            taken = self._take_sequential(wrap=self.mode != "once")
            if taken is None:
                raise FeedExhausted
            line, taken_at = taken, self.taken_at
            self._skip(self.count - 1)  # the other processes' lines
            self.taken_at = taken_at
        self.sent += 1
        text = self._text(line, self.taken_at).rstrip("\r")
        return self._csv_json(text) if self.csv else text

    def _text(self, line: bytes, start: int) -> str:
        """A line as text: UTF-8, or one line naming where it is not (never replaced)."""
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as error:
            raise UsageError(
                f"{self.where(start)}: not UTF-8"
                f" (byte 0x{line[error.start]:02x} at column {error.start + 1})"
            ) from None
        # A byte-order mark (Excel's UTF-8 CSV, some editors' JSONL) opens the file only.
        return text[1:] if start == 0 and text.startswith("\ufeff") else text

    def where(self, start: int | None = None) -> str:
        """``-D FILE line N`` (``label``'s words): the line that begins at ``start``
        (default: the one taken last), for an error about it."""
        line = self._line_number(self.taken_at if start is None else start)
        return f"{self.label} {self.path} line {line}"

    def _line_number(self, start: int) -> int:
        """The 1-based line that begins at byte ``start`` (counted only for an error)."""
        return self.data[:start].count(b"\n") + 1 if start else 1

    def _csv_json(self, row_text: str) -> str:
        row = next(csv.reader(io.StringIO(row_text)), [])
        if len(row) != len(self.header):
            raise UsageError(f"{self.where()}: {len(row)} values for {len(self.header)} columns")
        request: dict[str, Any] = {}
        for name, value in zip(self.header, row, strict=True):
            target = request
            *parents, leaf = name.split(".")
            for parent in parents:
                target = target.setdefault(parent, {})
            target[leaf] = value == "true" if name in self.bool_fields else value
        return json.dumps(request)

    def count_share(self) -> int:
        """Requests this process would send in one pass (``once``: all it will send)."""
        return len(range(self.index, self._request_lines, self.count))

    @cached_property
    def _request_lines(self) -> int:
        """The file's requests, counted once (a scan of the whole file)."""
        return len(self.lines) if self.lines is not None else sum(1 for _ in self._starts())


# The orders a flow's feeder takes rows in (``client.row``): ``once`` ends a level
# when its data runs out, which only -D's own loops know how to do.
FLOW_ORDERS = ("sequential", "random")


class FlowFeeders:
    """The feeder files a flow reads rows from (``client.row(path)``), one ``Feeder``
    per file and order in each generator process, opened at the first row."""

    def __init__(self, index: int = 0, count: int = 1) -> None:
        self.index, self.count = index, count  # this process's share, as -D's
        self._open: dict[tuple[str, str], Feeder] = {}

    def row(self, path: str, order: str) -> dict[str, Any]:
        """The next row as a dict; a bad file or line is a ``UsageError`` naming it,
        which ends the run as -D's does."""
        feeder = self._open.get((path, order))
        if feeder is None:
            if order not in FLOW_ORDERS or feed_format(path) is None:
                raise UsageError(
                    f"client.row({path!r}, order={order!r}): give a .jsonl, .ndjson or .csv"
                    f" file and order {' or '.join(map(repr, FLOW_ORDERS))}"
                )
            feeder = self._open[(path, order)] = Feeder(
                path, order, self.index, self.count, label="client.row"
            )
        try:
            text = feeder.next_text()
        except FeedExhausted:
            raise UsageError(f"client.row {path} holds no row") from None
        try:
            row = json.loads(text)
        except json.JSONDecodeError as error:
            raise UsageError(f"{feeder.where()}: not JSON ({error.msg})") from None
        if not isinstance(row, dict):
            raise UsageError(f"{feeder.where()}: a row is a JSON object, not {type(row).__name__}")
        return row
