"""A ``--call`` checked before anything starts, and resolved when its target is reached.

A schema from ``--proto`` or ``--protoset`` is read and the request checked
against it before anything starts; with neither, the schema comes from the
target's reflection service when the target is reached, still before any load.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from grpcbench.base.errors import UsageError
from grpcbench.rpc.call import CallMessages, MethodCall
from grpcbench.rpc.schema import (
    MethodSchema,
    compile_proto,
    parse_call_name,
    read_protoset,
    reflect,
)
from grpcbench.rpc.security import ChannelSecurity
from grpcbench.rpc.settings import CallSettings, MixEntry
from grpcbench.rpc.templates import Template, TemplateUse

if TYPE_CHECKING:
    from grpcbench.rpc.flow import PlannedFlow


@dataclass(frozen=True)
class PlannedCall:
    """A checked ``--call``: the schema read unless it comes from reflection."""

    method: str  # package.Service/Method
    schema_source: str  # "proto F", "protoset F" or "reflection"
    descriptor_set: bytes | None  # None: ask the target's reflection service
    data: str
    metadata: str
    stream_messages: int
    binary: bytes | None = None  # -B/-b: the request serialized, read into JSON per schema
    stream_interval_s: float = 0.0
    stream_duration_s: float = 0.0
    reflect_metadata: str = "{}"  # JSON object sent with the reflection requests
    templates: TemplateUse = "all"  # ghz's --disable-template-functions/-data
    import_paths: tuple[str, ...] = ()  # -i, as given (ghz's JSON report lists them)
    worker_prefix: str = ""  # the run's --name, before each {{.WorkerID}} (ghz's)
    weight: int = 1  # in a mix
    timeout_s: float = 0.0  # in a mix: its own timeout (0: the level's)
    label: str = ""  # in a mix: its rows' label ("" = the method)
    expected: tuple[str, ...] = ()  # in a mix: its own --expect-status (() = the level's)
    mix: tuple[PlannedCall, ...] = ()  # a mix's methods; the fields above are the first's
    feed_path: str = ""  # -D FILE.jsonl/.csv: a feeder (rpc.feeder)
    feed_mode: str = ""  # --feed
    mix_order: str = "cycle"  # --mix-order: cycle or random (rpc.mix)
    stream_round_trip: bool = False  # time each request to the reply that answers it
    stream_dynamic: bool = False  # --stream-dynamic-messages: each message rendered anew
    given: str = ""  # --call as typed ("pkg.Svc.Method" or "pkg.Svc/Method"), as ghz reports it
    data_path: str = ""  # -D FILE: where ``data`` came from (results keep a large one's path)

    def method_call(self, address: str, security: ChannelSecurity) -> MethodCall:
        """The call for this target: its schema from reflection if need be."""
        if self.mix:
            parts = tuple(part.method_call(address, security) for part in self.mix)
            return replace(parts[0], mix=parts, mix_order=self.mix_order)
        descriptor_set = self.descriptor_set
        if descriptor_set is None:
            descriptor_set = reflect(
                address, security, self.method.partition("/")[0], self.reflect_metadata
            )
        return self.checked(descriptor_set)

    def checked(self, descriptor_set: bytes) -> MethodCall:
        """The call against this schema: the method exists (else the known ones are
        listed), --stream-messages fits its method type, and its first request is built."""
        schema = MethodSchema(self.method, descriptor_set)
        if (self.stream_messages or self.stream_duration_s) and schema.method_type == "unary":
            raise UsageError(
                f"--stream-messages/--stream-call-duration: {self.method} is unary; they"
                " count or time a stream's messages (sent on a client or bidi stream, received"
                " on a server stream)"
            )
        if self.stream_interval_s and not schema.method.client_streaming:
            raise UsageError(
                f"--stream-interval: {self.method} is {schema.method_type}; only client and bidi"
                " streams send several messages"
            )
        if self.stream_dynamic and not schema.method.client_streaming:
            raise UsageError(
                f"--stream-dynamic-messages: {self.method} is {schema.method_type}; only client"
                " and bidi streams send several messages"
            )
        if self.stream_round_trip and schema.method_type != "bidi":
            raise UsageError(
                f"--stream-round-trip: {self.method} is {schema.method_type}; only a bidi stream"
                " answers each request with a reply"
            )
        data = self.data if self.binary is None else _binary_as_json(schema, self.binary)
        # A serialized request is sent as it is: its text is no template (ghz's neither).
        templates = "off" if self.binary is not None else self.templates
        call = MethodCall.build(
            schema, data, self.metadata, self.stream_messages, self.stream_interval_s,
            self.stream_duration_s, templates, self.worker_prefix,
        )  # fmt: skip
        call = replace(
            call, feed_path=self.feed_path, feed_mode=self.feed_mode, weight=self.weight,
            timeout_s=self.timeout_s, label=self.label, expected=self.expected,
            round_trip=self.stream_round_trip, dynamic=self.stream_dynamic,
        )  # fmt: skip
        call.__dict__["schema"] = schema  # the schema at hand (see MethodCall.build)
        CallMessages(call).check()
        return call


def _binary_as_json(schema: MethodSchema, binary: bytes) -> str:
    """-B/-b: the serialized request(s), as the JSON every generator builds requests from
    (the same messages: protobuf's JSON mapping round-trips every known field). As ghz
    reads them: varint-length-delimited messages if the bytes parse so (a list, cycled
    call by call, or a client stream's messages), else one message."""
    from google.protobuf import json_format
    from google.protobuf.message import DecodeError

    request_class = schema.request_class
    try:
        requests = _delimited(binary, request_class)
    except DecodeError:
        requests = []
    if not requests:
        request = request_class()
        try:
            request.ParseFromString(binary)
        except DecodeError:
            raise UsageError(
                f"-B/-b: the data is neither a serialized {request.DESCRIPTOR.full_name} nor"
                " length-delimited ones"
            ) from None
        requests = [request]
    values = [
        json_format.MessageToDict(request, preserving_proto_field_name=True) for request in requests
    ]
    return json.dumps(values[0] if len(values) == 1 else values)


def _delimited(binary: bytes, request_class: Any) -> list[Any]:
    """ghz's createPayloadsFromBinCountDelimited: messages each after its varint length,
    until the bytes run out or a length runs past them (what was read stays); a
    message that does not parse raises DecodeError."""
    messages: list[Any] = []
    position = 0
    while position < len(binary):
        length, shift, start = 0, 0, position
        while start < len(binary) and binary[start] & 0x80:
            length |= (binary[start] & 0x7F) << shift
            shift, start = shift + 7, start + 1
        if start >= len(binary) or shift > 63:  # a length cut short: ghz's unexpected EOF
            break
        length |= binary[start] << shift
        start += 1
        if start + length > len(binary):
            break
        message = request_class()
        message.ParseFromString(binary[start : start + length])
        messages.append(message)
        position = start + length
    return messages


def plan_flow(reference: str, settings: CallSettings) -> PlannedFlow:
    """``--workload module:function``: the flow loaded now (a module that fails to
    import is one line before anything starts), its schema from --proto/--protoset."""
    from grpcbench.rpc.flow import PlannedFlow, load_flow
    from grpcbench.rpc.setup_teardown import hooks_of

    settings.security.check()
    if settings.method:
        raise UsageError("--workload runs your flow's calls: give it or --call, not both")
    for option, given in (
        ("-d/-D", settings.data), ("-B/-b", settings.binary),
        ("--stream-messages", settings.stream_messages), ("--feed", settings.feed_path),
    ):  # fmt: skip
        if given:
            raise UsageError(f"{option} describes --call's requests; a --workload makes its own")
    descriptor_set, _ = _schema_files(settings)
    if descriptor_set is None:
        raise UsageError(
            "--workload needs the schema of the methods it calls: --proto or --protoset"
        )
    load_flow(reference)
    hooks_of(reference)  # a setup or teardown that is not async: one line now
    return PlannedFlow(
        reference, base64.b64encode(descriptor_set).decode(), settings.metadata or "{}"
    )


def plan_call(settings: CallSettings) -> PlannedCall | None:
    """None without ``--call``; else the call checked as far as it can be without a target."""
    settings.security.check()
    if not settings.method:
        for option, given in (
            ("--proto", settings.proto), ("--protoset", settings.protoset),
            ("-d/-D", settings.data), ("-m/-M", settings.metadata),
            ("--stream-messages", settings.stream_messages),
        ):  # fmt: skip
            if given:
                raise UsageError(f"{option} describes the method of --call: give --call too")
        return None
    method = parse_call_name(settings.method)
    if settings.import_paths and not settings.proto:
        raise UsageError("--import-paths goes with --proto")
    stream_messages = settings.stream_messages or 0
    if stream_messages < 0:
        raise UsageError(f"bad --stream-messages {stream_messages}: must be positive")
    descriptor_set, source = _schema_files(settings)
    if settings.binary is not None and settings.data is not None:
        raise UsageError("give the request as JSON (-d/-D) or serialized (-B/-b), not both")
    planned = PlannedCall(
        method, source, descriptor_set, settings.data or "{}", settings.metadata or "{}",
        stream_messages, settings.binary, settings.stream_interval_s, settings.stream_duration_s,
        settings.reflect_metadata or "{}", settings.templates,
        feed_path=settings.feed_path or "", feed_mode=settings.feed_mode or "",
        stream_round_trip=settings.stream_round_trip, stream_dynamic=settings.stream_dynamic,
        given=settings.method.strip(),
        import_paths=settings.import_paths, data_path=settings.data_path,
    )  # fmt: skip
    if settings.stream_dynamic and settings.binary is not None:
        raise UsageError("--stream-dynamic-messages renders -d's template: not with -B/-b"
                         " (ghz: cannot use dynamic messages with binary data)")  # fmt: skip
    if settings.stream_dynamic and Template(settings.data or "{}", settings.templates).fixed:
        raise UsageError(
            "--stream-dynamic-messages renders -d's template for each message, and -d has no"
            " template action (ghz fails such a run: its provider cannot use static data)"
        )
    if settings.feed_path and settings.binary is not None:
        raise UsageError("give the requests as -D FILE.jsonl/.csv or -B/-b, not both")
    if settings.mix_order and not settings.mix:
        raise UsageError("--mix-order orders a mix: give --call METHOD:WEIGHT twice or more")
    if settings.mix:
        planned = replace(plan_mix(planned, settings.mix), mix_order=settings.mix_order or "cycle")
    elif descriptor_set is not None:  # else checked when reflection gives the schema
        planned.checked(descriptor_set)
    return planned


def _schema_files(settings: CallSettings) -> tuple[bytes | None, str]:
    """The schema --proto or --protoset gives, and where it came from; (None,
    "reflection") with neither."""
    if settings.proto and settings.protoset:
        raise UsageError("give either --proto or --protoset, not both")
    if settings.proto:
        return compile_proto(settings.proto, settings.import_paths), f"proto {settings.proto}"
    if settings.protoset:
        return read_protoset(settings.protoset), f"protoset {settings.protoset}"
    return None, "reflection"


def plan_mix(common: PlannedCall, entries: tuple[MixEntry, ...]) -> PlannedCall:
    """A mix: one planned call per entry, each with the common settings where it gives
    none of its own; the result is the first, holding them all in ``mix``."""
    if common.binary is not None:
        raise UsageError("-B/-b gives one request: a mix's methods take -d or their own data")
    if common.feed_mode == "once":
        raise UsageError("--feed once ends a level when its lines run out: give it one --call")
    labels = mix_labels(entries)
    parts = []
    for entry, label in zip(entries, labels, strict=True):
        part = replace(
            common,
            method=parse_call_name(entry.method),
            data=entry.data if entry.data is not None else common.data,
            data_path="" if entry.data is not None else common.data_path,
            feed_path="" if entry.data is not None else common.feed_path,
            metadata=entry.metadata if entry.metadata is not None else common.metadata,
            weight=entry.weight,
            timeout_s=entry.timeout_s,
            label=label,
            expected=entry.expected,
        )
        if part.descriptor_set is not None:
            part.checked(part.descriptor_set)
        parts.append(part)
    return replace(parts[0], mix=tuple(parts))


def mix_labels(entries: tuple[MixEntry, ...]) -> list[str]:
    """Each entry's rows' label: its name, else its method; a method given twice without
    names (two kinds of request to one method) is told apart by its place: "M #2"."""
    methods = [parse_call_name(entry.method) for entry in entries]
    unnamed = ["" if entry.name else m for entry, m in zip(entries, methods, strict=True)]
    labels = []
    for index, (entry, method) in enumerate(zip(entries, methods, strict=True)):
        if entry.name:
            labels.append(entry.name)
        elif unnamed.count(method) > 1:
            labels.append(f"{method} #{unnamed[: index + 1].count(method)}")
        else:
            labels.append("")
    named = [label or method for label, method in zip(labels, methods, strict=True)]
    for label in named:
        if named.count(label) > 1:
            raise UsageError(f"mix: two entries are named {label!r}; names label rows")
    return labels


def resolve_call(planned: PlannedCall, address: str, security: ChannelSecurity) -> dict[str, Any]:
    """``planned.method_call`` as JSON: what a cluster worker that did the reflection
    sends back (a schema's descriptor pool does not cross processes; its bytes do)."""
    return planned.method_call(address, security).to_json()
