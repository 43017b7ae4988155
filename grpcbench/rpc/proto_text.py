"""Descriptors as .proto source text, the way grpcurl's ``describe`` prints them.

Types are fully qualified with a leading dot (``.helloworld.HelloRequest``), as
grpcurl prints them; nested messages and enums are printed inside their parent; each
element's leading comment above it, where the schema kept comments
(``rpc.proto_comments``: a -proto file's).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from google.protobuf import descriptor_pb2
from google.protobuf.descriptor import (
    Descriptor,
    EnumDescriptor,
    FieldDescriptor,
    FileDescriptor,
    MethodDescriptor,
    ServiceDescriptor,
)

from grpcbench.rpc.proto_comments import comment_lines

INDENT = "  "
NO_COMMENTS: Mapping[str, str] = MappingProxyType({})
_SCALARS = {
    FieldDescriptor.TYPE_DOUBLE: "double", FieldDescriptor.TYPE_FLOAT: "float",
    FieldDescriptor.TYPE_INT64: "int64", FieldDescriptor.TYPE_UINT64: "uint64",
    FieldDescriptor.TYPE_INT32: "int32", FieldDescriptor.TYPE_FIXED64: "fixed64",
    FieldDescriptor.TYPE_FIXED32: "fixed32", FieldDescriptor.TYPE_BOOL: "bool",
    FieldDescriptor.TYPE_STRING: "string", FieldDescriptor.TYPE_BYTES: "bytes",
    FieldDescriptor.TYPE_UINT32: "uint32", FieldDescriptor.TYPE_SFIXED32: "sfixed32",
    FieldDescriptor.TYPE_SFIXED64: "sfixed64", FieldDescriptor.TYPE_SINT32: "sint32",
    FieldDescriptor.TYPE_SINT64: "sint64",
}  # fmt: skip


def method_line(method: MethodDescriptor) -> str:
    request = ("stream " if method.client_streaming else "") + f".{method.input_type.full_name}"
    reply = ("stream " if method.server_streaming else "") + f".{method.output_type.full_name}"
    return f"rpc {method.name} ( {request} ) returns ( {reply} );"


def service_text(service: ServiceDescriptor, comments: Mapping[str, str] = NO_COMMENTS) -> str:
    lines = [*comment_lines(comments, service.full_name), f"service {service.name} {{"]
    # By name, as grpcurl prints them (its printer sorts elements).
    for method in sorted(service.methods, key=lambda m: m.name):
        lines += comment_lines(comments, method.full_name, INDENT)
        lines.append(INDENT + method_line(method))
    return "\n".join([*lines, "}"])


def _type_name(field: FieldDescriptor) -> str:
    if field.type in (FieldDescriptor.TYPE_MESSAGE, FieldDescriptor.TYPE_GROUP):
        return f".{field.message_type.full_name}"
    if field.type == FieldDescriptor.TYPE_ENUM:
        return f".{field.enum_type.full_name}"
    return _SCALARS[field.type]


def _is_map(field: FieldDescriptor) -> bool:
    entry = field.message_type
    return bool(entry and entry.GetOptions().map_entry)


def _label(field: FieldDescriptor) -> str:
    if field.is_repeated:
        return "repeated "
    if field.is_required:
        return "required "
    proto2 = _syntax(field.containing_type.file) == "proto2"
    oneof = field.containing_oneof
    synthetic = oneof is not None and oneof.name == "_" + field.name
    explicit_presence = field.has_presence and (oneof is None or synthetic)
    if proto2 or (explicit_presence and field.type != FieldDescriptor.TYPE_MESSAGE):
        return "optional "
    return ""


def _syntax(file: FileDescriptor) -> str:
    """ "proto2" or "proto3" (newer protobuf has no ``FileDescriptor.syntax``)."""
    syntax = getattr(file, "syntax", None)
    if syntax is None:
        syntax = descriptor_pb2.FileDescriptorProto.FromString(file.serialized_pb).syntax
    return str(syntax or "proto2")


def field_line(field: FieldDescriptor) -> str:
    if _is_map(field):
        entry = field.message_type.fields_by_name
        key, value = entry["key"], entry["value"]
        return f"map<{_type_name(key)}, {_type_name(value)}> {field.name} = {field.number};"
    return f"{_label(field)}{_type_name(field)} {field.name} = {field.number};"


def enum_text(
    enum: EnumDescriptor, depth: int = 0, comments: Mapping[str, str] = NO_COMMENTS
) -> str:
    pad = INDENT * depth
    lines = [*comment_lines(comments, enum.full_name, pad), f"{pad}enum {enum.name} {{"]
    scope = enum.full_name.rpartition(".")[0]  # a value's full name is in its enum's scope
    for value in enum.values:
        lines += comment_lines(comments, f"{scope}.{value.name}" if scope else value.name,
                               pad + INDENT)  # fmt: skip
        lines.append(f"{pad}{INDENT}{value.name} = {value.number};")
    return "\n".join([*lines, f"{pad}}}"])


def message_text(
    message: Descriptor, depth: int = 0, comments: Mapping[str, str] = NO_COMMENTS
) -> str:
    pad, inner = INDENT * depth, INDENT * (depth + 1)
    lines = [*comment_lines(comments, message.full_name, pad), f"{pad}message {message.name} {{"]
    shown: set[str] = set()  # real oneofs already printed, at their first field
    for field in message.fields:
        oneof = field.containing_oneof
        if oneof is None or oneof.name == "_" + field.name:  # none, or proto3 optional's
            lines += comment_lines(comments, field.full_name, inner)
            lines.append(f"{inner}{field_line(field)}")
        elif oneof.name not in shown:
            shown.add(oneof.name)
            lines.append(f"{inner}oneof {oneof.name} {{")
            lines += [
                f"{inner}{INDENT}{member_line}" for member_line in map(field_line, oneof.fields)
            ]
            lines.append(f"{inner}}}")
    for nested in sorted(message.nested_types, key=lambda n: n.name):  # grpcurl's order
        if not nested.GetOptions().map_entry:
            lines.append(message_text(nested, depth + 1, comments))
    lines += [enum_text(e, depth + 1, comments)
              for e in sorted(message.enum_types, key=lambda e: e.name)]  # fmt: skip
    return "\n".join([*lines, f"{pad}}}"])
