"""A method call given by name, schema, data and metadata: what ``--call`` runs.

``MethodCall`` is plain data (it crosses into generator processes inside the
``GeneratorJob``, on their stdin). ``CallMessages`` turns it into the serialized
requests and the metadata of each call, with ghz's template data rendered per
call when the data or metadata use it, and built once when they do not.
Requests are protobuf's own: ``json_format`` into the schema's message class.
The metadata may hold credentials: it is never printed, saved, or put on a
command line (the results keep only its keys).
"""

from __future__ import annotations

import base64
import difflib
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import cached_property
from typing import Any

from google.protobuf import json_format

from grpcbench.base.errors import UsageError
from grpcbench.base.input_files import read_input_text
from grpcbench.rpc.feeder import Feeder, FeedExhausted
from grpcbench.rpc.schema import MethodSchema
from grpcbench.rpc.templates import MethodNames, Template, TemplateUse, call_fields

Metadata = tuple[tuple[str, str | bytes], ...]


@dataclass(frozen=True)
class MethodCall:
    call: str  # package.Service/Method
    descriptor_set_b64: str  # the schema, a serialized FileDescriptorSet
    data: str = "{}"  # JSON: one message, or a list (cycled per call, or a stream's messages)
    metadata: str = "{}"  # JSON object of strings; may hold credentials
    stream_messages: int = 0  # client/bidi streams: messages per call; 0 = the data list's
    stream_interval_s: float = 0.0  # client/bidi streams: a pause between messages sent
    stream_duration_s: float = 0.0  # client/bidi streams: stop sending after this long
    templates: TemplateUse = "all"  # ghz's --disable-template-functions/-data
    worker_prefix: str = ""  # the run's --name: ghz puts it before each {{.WorkerID}}
    # In a mix: this method's weight, own timeout (0: the level's) and rows' label.
    weight: int = 1
    timeout_s: float = 0.0
    label: str = ""
    expected: tuple[str, ...] = ()  # statuses that count as success (() = the level's)
    # -D FILE.jsonl/.csv: a feeder (rpc.feeder) giving each call a line; --feed's mode.
    feed_path: str = ""
    feed_mode: str = ""
    # A mix (rpc.mix): its methods, in order; the fields above are then the first's.
    mix: tuple[MethodCall, ...] = ()
    round_trip: bool = False  # bidi: time each request to its reply (--stream-round-trip)

    @classmethod
    def build(
        cls, schema: MethodSchema, data: str, metadata: str, stream_messages: int = 0,
        stream_interval_s: float = 0.0, stream_duration_s: float = 0.0,
        templates: TemplateUse = "all", worker_prefix: str = "",
    ) -> MethodCall:  # fmt: skip
        call = cls(
            schema.call,
            base64.b64encode(schema.descriptor_set).decode(),
            data,
            metadata,
            stream_messages,
            stream_interval_s,
            stream_duration_s,
            templates,
            worker_prefix,
        )
        # The schema at hand, so ``call.schema`` does not decode and build it again.
        call.__dict__["schema"] = schema
        return call

    @cached_property
    def schema(self) -> MethodSchema:
        return MethodSchema(self.call, base64.b64decode(self.descriptor_set_b64))

    @property
    def name(self) -> str:
        """How its rows are labelled: the label given, else the method."""
        return self.label or self.call

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["mix"] = [part.to_json() for part in self.mix]
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MethodCall:
        fields = dict(data)
        fields["mix"] = tuple(cls.from_json(part) for part in fields.get("mix") or ())
        fields["expected"] = tuple(fields.get("expected") or ())
        return cls(**fields)


# Well-known types whose JSON is a bare value, not an object (proto3's JSON mapping).
WRAPPERS = {f"google.protobuf.{name}" for name in (
    "StringValue", "BytesValue", "BoolValue", "Int32Value", "Int64Value", "UInt32Value",
    "UInt64Value", "FloatValue", "DoubleValue", "Value", "Timestamp", "Duration", "FieldMask",
)}  # fmt: skip
_NO_FIELD = re.compile(r'Message type "([\w.]+)" has no field named "([^"]+)" at "[^"]*"\.')


def _in_proto_names(error: str, request: Any) -> str:
    """protobuf's "no field" error lists the JSON (camelCase) names; a user wrote the
    .proto's: say which message lacks the field, its fields as the .proto spells them,
    and the closest one."""
    match = _NO_FIELD.search(error)
    if match is None:
        return error
    try:  # the field may be in a nested message: the schema's own pool knows it
        message = request.file.pool.FindMessageTypeByName(match.group(1))
    except KeyError:
        return error.splitlines()[0]
    names = [field.name for field in message.fields]
    close = difflib.get_close_matches(match.group(2), names, n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]}?" if close else ""
    return f"{match.group(1)} has no field {match.group(2)}{hint} (its fields: {', '.join(names)})"


def _json(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as error:
        raise UsageError(f"{what} is not valid JSON: {error}") from None
    except RecursionError:
        raise UsageError(f"{what} is nested too deeply to be a request") from None


def parse_metadata(text: str) -> Metadata:
    """-m/-M's JSON object text -> gRPC metadata (one UsageError if it is not that)."""
    return metadata_pairs(_json(text, "the metadata (-m/-M)"), "the metadata (-m/-M)")


def metadata_pairs(value: Any, what: str) -> Metadata:
    """A JSON object of strings -> gRPC metadata; ``-bin`` keys carry bytes."""
    if not isinstance(value, dict):
        raise UsageError(f"{what} must be a JSON object of strings")
    pairs: list[tuple[str, str | bytes]] = []
    for key, item in value.items():
        if not isinstance(item, str | int | float | bool) or not key:
            raise UsageError(f"{what}: the value of {key!r} must be a string")
        name = key.lower()  # gRPC metadata keys are lower case (ghz lowercases them too)
        text = str(item)
        _check_metadata(name, text, what)
        pairs.append((name, text.encode() if name.endswith("-bin") else text))
    return tuple(pairs)


# gRPC's PROTOCOL-HTTP2.md: a key is lower-case letters, digits, "_", "-" and "."; a
# value printable ASCII (space included) unless the key ends in -bin (any bytes).
_METADATA_KEY = re.compile(r"[0-9a-z_.-]+")
_METADATA_VALUE = re.compile(r"[\x20-\x7e]*")


# Keys gRPC sets itself (grpc-go's isReservedHeader; grpc.aio leaves them out too) and
# HTTP/2's connection-specific fields (RFC 9113 8.2.2, 8.3.1): as metadata they would be
# dropped by grpc and malformed or duplicated on the wire, so each is refused by name.
RESERVED_METADATA = {
    "content-type": "gRPC sets it (application/grpc)",
    "te": "gRPC sets it (trailers)",
    "user-agent": "gRPC sets it",
    "grpc-timeout": "the call's deadline sets it: give -t/--timeout",
    "grpc-encoding": "compression sets it: give -e/--enable-compression",
    "grpc-message-type": "gRPC sets it",
    "grpc-message": "a server's reply field",
    "grpc-status": "a server's reply field",
    "grpc-status-details-bin": "a server's reply field",
    "host": "HTTP/2 carries it as :authority: give --authority",
    "connection": "HTTP/2 has no connection-specific fields",
    "keep-alive": "HTTP/2 has no connection-specific fields: give --keepalive for PINGs",
    "proxy-connection": "HTTP/2 has no connection-specific fields",
    "transfer-encoding": "HTTP/2 has no connection-specific fields",
    "upgrade": "HTTP/2 has no connection-specific fields",
}


def _check_reserved(name: str, what: str) -> None:
    """A reserved key (``RESERVED_METADATA``), which grpc would drop and the wire stack
    would send, is refused by name."""
    if name in RESERVED_METADATA:
        raise UsageError(f"{what}: {name} is reserved: {RESERVED_METADATA[name]}")


def _check_metadata(name: str, value: str, what: str) -> None:
    """Metadata grpc would refuse to send is refused here, before any load, on both
    client stacks (grpc crashed the generator; wire sent it); so is a reserved key."""
    _check_reserved(name, what)
    if not _METADATA_KEY.fullmatch(name):
        shown = ":authority and other pseudo-headers" if name.startswith(":") else repr(name)
        raise UsageError(
            f"{what}: {shown} cannot be a metadata key (letters, digits, '_', '-', '.')"
        )
    if not name.endswith("-bin") and not _METADATA_VALUE.fullmatch(value):
        raise UsageError(
            f"{what}: the value of {name!r} holds a character gRPC metadata cannot carry"
            " (printable ASCII only; a key ending in -bin carries any bytes)"
        )


class CallMessages:
    """Serialized requests and metadata, call after call, for one generator process.

    Request numbers are unique across the level's processes (process ``index``
    of ``count`` takes index, index + count, ...), as ghz's are across workers."""

    def __init__(self, call: MethodCall, index: int = 0, count: int = 1) -> None:
        self.call = call
        self.schema = call.schema
        method = self.schema.method
        self.names = MethodNames(
            call.call,
            method.input_type.full_name,
            method.output_type.full_name,
            method.client_streaming,
            method.server_streaming,
        )
        self.streams = method.client_streaming
        self.feeder = (
            Feeder(
                call.feed_path,
                call.feed_mode,
                index,
                count,
                bool_fields=_bool_fields(method.input_type),
            )  # fmt: skip
            if call.feed_path
            else None
        )
        self.data = Template(call.data, call.templates)
        self.metadata_template = Template(call.metadata, call.templates)
        self.next_number = index
        self.step = count
        fixed = self.data.fixed and self.feeder is None
        self.fixed_messages = self._messages(self.data.text) if fixed else None
        self.fixed_metadata = (
            self._metadata(self.metadata_template.text) if self.metadata_template.fixed else None
        )

    def _messages(self, text: str) -> list[bytes]:
        value = _json(text, "the request data (-d/-D)")
        items = value if isinstance(value, list) else [value]
        if not items:
            raise UsageError("the request data is an empty list: give at least one message")
        request_class = self.schema.request_class
        # A well-known wrapper's JSON is a bare value (ghz's '"asdf"' for a StringValue);
        # any other message's is an object.
        wrapper = request_class.DESCRIPTOR.full_name in WRAPPERS
        messages = []
        for item in items:
            if not isinstance(item, dict) and not wrapper:
                raise UsageError(
                    f"the request data must be a JSON object (or a list of them) for"
                    f" {request_class.DESCRIPTOR.full_name}, not {json.dumps(item)[:60]}"
                )
            try:
                message = json_format.ParseDict(item, request_class())
            except json_format.ParseError as error:
                raise UsageError(
                    f"the request does not fit {request_class.DESCRIPTOR.full_name}:"
                    f" {_in_proto_names(str(error), request_class.DESCRIPTOR)}"
                ) from None
            messages.append(message.SerializeToString())
        return messages

    def _metadata(self, text: str) -> Metadata:
        return parse_metadata(text)

    def _stream(self, messages: Sequence[bytes]) -> list[bytes]:
        """A client stream: the data list, or its first ``stream_messages`` (from the top
        again when the list is shorter), the same on every stream, as ghz sends them."""
        count = self.call.stream_messages
        if not count:
            return list(messages)
        return [messages[i % len(messages)] for i in range(count)]

    def next(self, worker_id: str) -> tuple[list[bytes], Metadata]:
        """The next call's request messages (one for unary or server streaming) and metadata."""
        number = self.next_number
        self.next_number += self.step
        fields = None
        if self.fixed_messages is not None:
            messages = self.fixed_messages
        elif self.feeder is not None:  # the feeder's next line, its template rendered
            messages, fields = self._fed(worker_id, number)
        else:
            fields = call_fields(self.names, worker_id, number)
            messages = self._messages(self.data.render(fields))
        if self.fixed_metadata is not None:
            metadata = self.fixed_metadata
        else:
            fields = fields or call_fields(self.names, worker_id, number)
            metadata = self._metadata(self.metadata_template.render(fields))
        if self.streams:
            return self._stream(messages), metadata
        return [messages[number % len(messages)]], metadata

    def _fed(self, worker_id: str, number: int) -> tuple[list[bytes], dict[str, Any] | None]:
        """The feeder's next line as request messages; a bad line is one error that
        names its file and line, whenever it is sent (``FEED_CHECKED`` lines are
        checked before any load, the others when their turn comes)."""
        assert self.feeder is not None
        line = Template(self.feeder.next_text(), self.call.templates)
        fields = None
        try:
            text = line.text
            if not line.fixed:
                fields = call_fields(self.names, worker_id, number)
                text = line.render(fields)
            return self._messages(text), fields
        except UsageError as error:
            said, where = str(error), self.feeder.where()
            if said.startswith(where):
                raise
            raise UsageError(f"{where}: {said}") from None

    def check(self) -> None:
        """Build a first call now: a request that does not fit fails before any load (a
        feeder's first lines, up to ``FEED_CHECKED``, each checked)."""
        saved = self.next_number
        if self.feeder is None:
            self.next(worker_id="0")
        else:
            for checked in range(FEED_CHECKED):
                try:
                    self.next(worker_id="0")
                except FeedExhausted:  # a bad line raises, naming itself (``_fed``)
                    if not checked:
                        raise UsageError(f"-D {self.call.feed_path} holds no request") from None
                    break
        self.next_number = saved

    def requests_left(self) -> int | None:
        """A ``once`` feeder: the calls this process will make in all (None: unbounded)."""
        if self.feeder is None or self.feeder.mode != "once":
            return None
        return self.feeder.count_share() - self.feeder.sent


FEED_CHECKED = 1000  # a feeder's lines checked before any load (later ones, when sent)


def _bool_fields(message: Any, prefix: str = "") -> frozenset[str]:
    """A message's bool fields, dotted as a CSV header names them (nested messages to
    a depth of 9: a recursive message would never end)."""
    names: set[str] = set()
    for field in message.fields:
        name = prefix + field.name
        if field.type == field.TYPE_BOOL:
            names.add(name)
        elif field.message_type is not None and prefix.count(".") <= 8:
            names |= _bool_fields(field.message_type, name + ".")
    return frozenset(names)


def read_utf8(path: str, option: str) -> str:
    """A text file an option names, or one line saying why it cannot be read."""
    return read_input_text(path, option)


def read_data(data: str | None, data_file: str | None) -> str:
    """``-d JSON`` or ``-D FILE`` (ghz's options) -> the data text; ``{}`` without either."""
    if data is not None and data_file is not None:
        raise UsageError("give either -d/--data or -D/--data-file, not both")
    if data_file is not None:
        text = read_utf8(data_file, "-D")
        if not text.strip():  # never taken for {}: an empty file is a mistake, not a request
            raise UsageError(f"-D {data_file} is empty: give the request as JSON (or {{}})")
        return text
    return data if data is not None else "{}"


def read_metadata(items: Sequence[str], metadata_file: str | None) -> str:
    """``-m KEY=VALUE`` (repeatable) or ghz's ``-m JSON``, and/or ``-M FILE`` -> one JSON object.

    Later entries win; the values stay untouched (template actions included)."""
    merged: dict[str, Any] = {}
    if metadata_file is not None:
        text = read_utf8(metadata_file, "-M")
        value = _json(text, f"-M {os.path.basename(metadata_file)}")
        metadata_pairs(value, "-M")
        merged.update(value)
    for item in items:
        if item.lstrip().startswith("{"):
            value = _json(item, "-m")
            metadata_pairs(value, "-m")
            merged.update(value)
            continue
        key, separator, text = item.partition("=")
        if not separator or not key.strip():
            raise UsageError("bad -m: expected KEY=VALUE or a JSON object")  # never echo a value
        merged[key.strip()] = text
    for key in merged:  # the values wait for their templates; a reserved key is known now
        _check_reserved(key.lower(), "-m")
    return json.dumps(merged)
