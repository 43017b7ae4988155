"""``--call`` and its companions as given: ghz's options, from the command line or a scenario.

The command line and a scenario's ``[call]``/``[tls]`` tables give the same
things; the command line wins field by field. ``rpc.planned`` checks them.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from grpcbench.base import panels
from grpcbench.base.declarations import group, option
from grpcbench.base.errors import UsageError
from grpcbench.rpc.security import ChannelSecurity
from grpcbench.rpc.templates import TemplateUse


@dataclass(frozen=True)
class MixEntry:
    """One method of a mix as given (``--call METHOD:WEIGHT`` or a scenario's ``[[mix]]``
    entry); its own data, metadata and timeout, None/0 where the mix's apply."""

    method: str
    weight: int = 1
    data: str | None = None
    metadata: str | None = None
    timeout_s: float = 0.0  # 0: the level's --timeout
    name: str = ""  # its rows' label; "" = the method
    expected: tuple[str, ...] = ()  # statuses that count as success; () = the level's


MIX_ORDERS = ("cycle", "random")


def parse_mix_entry(text: str) -> MixEntry:
    """``package.Service/Method[:WEIGHT]`` (a method name never holds a colon)."""
    method, colon, weight = text.rpartition(":")
    if not colon:
        return MixEntry(text)
    if not weight.isdecimal() or int(weight) < 1:
        raise UsageError(f"bad --call {text!r}: the weight after ':' must be a positive integer")
    return MixEntry(method, int(weight))


@dataclass(frozen=True)
class CallSettings:
    """What names a method call and how to send it; None = not given."""

    method: str | None = None  # package.Service/Method (or package.Service.Method)
    proto: str | None = None
    import_paths: tuple[str, ...] = ()
    protoset: str | None = None
    data: str | None = None  # JSON text, maybe with ghz template actions
    data_path: str = ""  # -D FILE: where ``data`` was read from (results keep a large one's path)
    metadata: str | None = None  # JSON object text; may hold credentials
    stream_messages: int | None = None
    security: ChannelSecurity = field(default_factory=ChannelSecurity)
    binary: bytes | None = None  # -B/-b: the request as a serialized message (not JSON)
    stream_interval_s: float = 0.0  # --stream-interval: a pause between stream messages
    stream_duration_s: float = 0.0  # --stream-call-duration: a stream's sending time limit
    stream_round_trip: bool = False  # --stream-round-trip: the n-th reply answers the n-th
    stream_dynamic: bool = False  # --stream-dynamic-messages: each message rendered anew
    reflect_metadata: str | None = None  # --reflect-metadata: JSON object for reflection
    templates: TemplateUse = "all"  # ghz's --disable-template-functions/-data
    # A mix: several methods in one level (``method`` is then the first's); data and
    # metadata above apply to every entry that has none of its own.
    mix: tuple[MixEntry, ...] = ()
    feed_path: str | None = None  # -D FILE.jsonl/.csv: a feeder, one request per line
    feed_mode: str | None = None  # --feed: sequential, random or once
    mix_order: str | None = None  # --mix-order: cycle (the default) or random

    def over(self, base: CallSettings) -> CallSettings:
        """These settings where given, ``base``'s (a scenario file's) elsewhere."""
        return CallSettings(
            method=self.method or base.method,
            proto=self.proto or base.proto,
            import_paths=self.import_paths or base.import_paths,
            protoset=self.protoset or base.protoset,
            data=self.data if self.data is not None else base.data,
            data_path=self.data_path if self.data is not None else base.data_path,
            metadata=self.metadata if self.metadata is not None else base.metadata,
            stream_messages=(
                self.stream_messages if self.stream_messages is not None else base.stream_messages
            ),
            security=self.security if self.security.tls else base.security,
            binary=self.binary if self.binary is not None else base.binary,
            stream_interval_s=self.stream_interval_s or base.stream_interval_s,
            stream_duration_s=self.stream_duration_s or base.stream_duration_s,
            stream_round_trip=self.stream_round_trip or base.stream_round_trip,
            stream_dynamic=self.stream_dynamic or base.stream_dynamic,
            reflect_metadata=self.reflect_metadata or base.reflect_metadata,
            templates=self.templates,
            mix=self.mix if self.method else base.mix,
            feed_path=self.feed_path or base.feed_path,
            feed_mode=self.feed_mode or base.feed_mode,
            mix_order=self.mix_order or base.mix_order,
        )


@dataclass(frozen=True)
class CallArgs:
    """The command line's --call options, raw (files not read yet), each declared once:
    its option, help and panel (``base.declarations.option``)."""

    call: tuple[str, ...] = option(
        (),
        help=(
            "Call this method instead of the service's workload: package.Service/Method "
            "(or package.Service.Method). Schema from --proto, --protoset or reflection. "
            "Repeat it, each as METHOD:WEIGHT, for a mix of methods in one level."
        ),
        panel=panels.CALL,
    )
    proto: str | None = option(
        None,
        help=("The .proto of --call (needs grpcbench[proto])."),
        panel=panels.CALL,
        reads=True,
    )
    import_paths: str | None = option(
        None,
        "--import-paths",
        "-i",
        help=("Comma-separated import paths of --proto."),
        panel=panels.CALL,
    )
    protoset: str | None = option(
        None,
        help=("A compiled FileDescriptorSet holding --call's method."),
        panel=panels.CALL,
        reads=True,
    )
    data: str | None = option(
        None,
        "--data",
        "-d",
        help=(
            "The request as JSON; a list is cycled per call, or is a client stream's "
            "messages. ghz's template actions work: {{.RequestNumber}}, {{newUUID}}, ..."
        ),
        panel=panels.CALL,
    )
    data_file: str | None = option(
        None,
        "--data-file",
        "-D",
        help=(
            "The request JSON from a file; a .jsonl (one request per line) or .csv file "
            "feeds each call its next line (see --feed)."
        ),
        panel=panels.CALL,
        reads=True,
    )
    feed: str | None = option(
        None,
        help=(
            "How calls take the lines of -D FILE.jsonl/.csv: sequential (the default, from "
            "the top again at the end), random, or once (the level ends when they run out)."
        ),
        panel=panels.CALL,
    )
    mix_order: str | None = option(
        None,
        help=(
            "The order of a mix's methods: cycle (the default: each exactly its weight in"
            " every period, spread evenly) or random (each call draws its method by weight,"
            " as Locust's tasks do)."
        ),
        panel=panels.CALL,
    )
    metadata: tuple[str, ...] = option(
        (),
        "--metadata",
        "-m",
        help=(
            "Request metadata, KEY=VALUE (repeatable) or a JSON object as in ghz. Values "
            "are never printed or saved."
        ),
        panel=panels.CALL,
        secret=True,
    )
    metadata_file: str | None = option(
        None,
        "--metadata-file",
        "-M",
        help=("Request metadata as a JSON object in a file."),
        panel=panels.CALL,
        reads=True,
    )
    stream_messages: int | None = option(
        None,
        help="Client and bidi streams: messages sent per call, the -d list's first N on every"
        " stream (default: the whole list). Server streams: the client cancels the call"
        " after N replies (it counts OK), as ghz's --stream-call-count.",
        panel=panels.CALL,
    )
    security: ChannelSecurity = group(ChannelSecurity)
    stream_dynamic_messages: bool = option(
        False,
        help="Client and bidi streams: render -d's template for each message sent (a new"
        " timestamp, UUID and random values; the call's worker and request number), as"
        " ghz's --stream-dynamic-messages.",
        panel=panels.CALL,
    )
    binary_file: str | None = option(
        None,
        "--binary-file",
        "-B",
        help=("The request as a serialized protobuf message in a file (ghz's -B)."),
        panel=panels.CALL,
        reads=True,
    )
    binary_stdin: bool = option(
        False,
        "--binary",
        "-b",
        help=("The request as a serialized protobuf message on standard input (ghz's -b)."),
        panel=panels.CALL,
    )
    stream_interval: str | None = option(
        None,
        help=(
            "Client and bidi streams: send one message every INTERVAL (e.g. 100ms) on a"
            " pacer from the stream's start; each message's lag behind it is measured."
        ),
        panel=panels.CALL,
    )
    stream_call_duration: str | None = option(
        None,
        help="Client and bidi streams: stop sending (half-close) once a stream is this old."
        " Server streams: the client cancels the call then (it counts OK), as ghz's.",
        panel=panels.CALL,
    )
    stream_round_trip: bool = option(
        False,
        help=(
            "Bidi streams that answer each request in order (an echo): time each request's"
            " round trip to its reply (the n-th reply answers the n-th request)."
        ),
        panel=panels.CALL,
    )
    reflect_metadata: str | None = option(
        None,
        help=("Metadata for the reflection requests, a JSON object (ghz's)."),
        panel=panels.CALL,
        secret=True,
    )

    # Set from ghz's --disable-template-functions/-data (run.ghz_compat), not an option.
    templates: TemplateUse = "all"

    def settings(self) -> CallSettings:
        """With -D and -M read (a UsageError names a file that cannot be read)."""
        from grpcbench.rpc.call import read_data
        from grpcbench.rpc.feeder import MODES, feed_format
        from grpcbench.rpc.metadata_text import read_metadata

        feeding = self.data_file is not None and feed_format(self.data_file) is not None
        if self.feed is not None and self.feed not in MODES:
            raise UsageError(f"bad --feed {self.feed!r}: one of {', '.join(MODES)}")
        if self.mix_order is not None and self.mix_order not in MIX_ORDERS:
            raise UsageError(f"bad --mix-order {self.mix_order!r}: one of {', '.join(MIX_ORDERS)}")
        if self.feed is not None and not feeding:
            raise UsageError("--feed takes the lines of -D FILE.jsonl (or .ndjson, .csv)")
        given = self.data is not None or (self.data_file is not None and not feeding)
        has_metadata = bool(self.metadata) or self.metadata_file is not None
        calls = tuple(self.call)
        entries = tuple(parse_mix_entry(text) for text in calls)
        is_mix = len(entries) > 1 or any(":" in text for text in calls)
        return CallSettings(
            method=entries[0].method if entries else None,
            mix=entries if is_mix else (),
            feed_path=_feed_path(self.data_file) if feeding else None,
            feed_mode=(self.feed or "sequential") if feeding else None,
            mix_order=self.mix_order,
            proto=self.proto,
            import_paths=tuple(
                p.strip() for p in (self.import_paths or "").split(",") if p.strip()
            ),
            protoset=self.protoset,
            data=read_data(self.data, self.data_file) if given else None,
            data_path=self.data_file if given and self.data_file is not None else "",
            metadata=read_metadata(self.metadata, self.metadata_file) if has_metadata else None,
            stream_messages=self.stream_messages,
            security=self.security,
            binary=self._binary(),
            stream_interval_s=_duration(self.stream_interval, "--stream-interval"),
            stream_duration_s=_duration(self.stream_call_duration, "--stream-call-duration"),
            stream_round_trip=self.stream_round_trip,
            stream_dynamic=self.stream_dynamic_messages,
            reflect_metadata=(
                read_metadata((self.reflect_metadata,), None) if self.reflect_metadata else None
            ),
            templates=self.templates,
        )

    def _binary(self) -> bytes | None:
        if self.binary_file is not None and self.binary_stdin:
            raise UsageError("give either -B FILE or -b (standard input), not both")
        if self.binary_file is not None:
            from grpcbench.base.input_files import read_input_bytes

            return read_input_bytes(self.binary_file, "-B")
        if self.binary_stdin:
            return sys.stdin.buffer.read()
        return None


def _feed_path(path: str | None) -> str:
    """A feeder's file, as an absolute path (generators may start elsewhere), checked
    readable now."""
    import os

    from grpcbench.base.input_files import check_regular_file

    assert path is not None
    check_regular_file(path, "-D")
    return os.path.abspath(path)


def _duration(text: str | None, option: str) -> float:
    from grpcbench.base.parsing import parse_duration

    return parse_duration(text, option) if text else 0.0
