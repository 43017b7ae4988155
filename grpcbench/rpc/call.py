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
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import cached_property
from typing import Any

from google.protobuf import json_format

from grpcbench.base.errors import UsageError
from grpcbench.base.input_files import read_input_text
from grpcbench.rpc.feeder import Feeder, FeedExhausted
from grpcbench.rpc.metadata_text import Metadata, parse_json, parse_metadata
from grpcbench.rpc.schema import MethodSchema
from grpcbench.rpc.templates import MethodNames, Template, TemplateUse, call_fields


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
    mix_order: str = "cycle"  # rpc.mix: cycle or random
    round_trip: bool = False  # bidi: time each request to its reply (--stream-round-trip)
    # ghz's --stream-dynamic-messages: a client stream's data rendered for each message.
    dynamic: bool = False

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
        if self.mix_order == "cycle":  # the default, as every saved job was written
            del data["mix_order"]
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
        # --stream-dynamic-messages: each message of a client stream rendered as it is
        # sent; how many: --stream-messages, or the list's length (the same every call).
        self.dynamic = call.dynamic and self.streams and not fixed and self.feeder is None
        self.dynamic_count = 0
        if self.dynamic:
            first = self._messages(self.data.render(call_fields(self.names, "", 0)))
            self.dynamic_count = call.stream_messages or len(first)

    def _messages(self, text: str) -> list[bytes]:
        value = parse_json(text, "the request data (-d/-D)")
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

    def next(self, worker_id: str) -> tuple[Sequence[bytes], Metadata]:
        """The next call's request messages (one for unary or server streaming) and metadata."""
        number = self.next_number
        self.next_number += self.step
        fields = None
        messages: Sequence[bytes]
        if self.fixed_messages is not None:
            messages = self.fixed_messages
        elif self.dynamic:
            fields = call_fields(self.names, worker_id, number)
            messages = RenderedOnSend(self, worker_id, number)
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
        if self.dynamic:
            return messages, metadata  # rendered as the stream takes each
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


class RenderedOnSend(Sequence[bytes]):
    """One call's client-stream messages under --stream-dynamic-messages, each rendered
    when the stream takes it: the call's worker id and request number, a new
    timestamp, UUID and random values, as ghz's ``CallData.Regenerate`` gives them;
    message i is the data list's element i (from the top again when it is shorter)."""

    def __init__(self, messages: CallMessages, worker_id: str, number: int) -> None:
        self.messages = messages
        self.worker_id = worker_id
        self.number = number

    def __len__(self) -> int:
        return self.messages.dynamic_count

    def __getitem__(self, index: int) -> bytes:  # type: ignore[override]
        if not 0 <= index < len(self):
            raise IndexError(index)
        source = self.messages
        fields = call_fields(source.names, self.worker_id, self.number)
        items = source._messages(source.data.render(fields))
        return items[index % len(items)]
