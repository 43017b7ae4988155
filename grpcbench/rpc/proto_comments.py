"""The comments of a schema's elements, by full name, as grpcurl's ``describe`` prints
them: a descriptor set's ``source_code_info`` (protoc's, with --include_source_info)
read back through the element paths it is keyed by.

grpcurl prints leading comments only (no trailing or detached ones), each line as
``//`` and the line, a space added where the line has none (jhump/protoreflect's
protoprint)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from google.protobuf import descriptor_pb2

# Field numbers of descriptor.proto: where an element's list sits in its parent.
_FILE_MESSAGES, _FILE_ENUMS, _FILE_SERVICES = 4, 5, 6
_MESSAGE_FIELDS, _MESSAGE_NESTED, _MESSAGE_ENUMS = 2, 3, 4
_ENUM_VALUES, _SERVICE_METHODS = 2, 2

Path = tuple[int, ...]
WHITESPACE = " \t"  # what protoprint trims from a comment line's end


def _scoped(scope: str, name: str) -> str:
    return f"{scope}.{name}" if scope else name


def _enum_paths(
    enum: descriptor_pb2.EnumDescriptorProto, path: Path, scope: str
) -> Iterator[tuple[Path, str]]:
    yield path, _scoped(scope, enum.name)
    # An enum value's full name is in its enum's scope, as protobuf names it.
    for index, value in enumerate(enum.value):
        yield (*path, _ENUM_VALUES, index), _scoped(scope, value.name)


def _message_paths(
    message: descriptor_pb2.DescriptorProto, path: Path, scope: str
) -> Iterator[tuple[Path, str]]:
    name = _scoped(scope, message.name)
    yield path, name
    for index, field in enumerate(message.field):
        yield (*path, _MESSAGE_FIELDS, index), f"{name}.{field.name}"
    for index, nested in enumerate(message.nested_type):
        yield from _message_paths(nested, (*path, _MESSAGE_NESTED, index), name)
    for index, enum in enumerate(message.enum_type):
        yield from _enum_paths(enum, (*path, _MESSAGE_ENUMS, index), name)


def _file_paths(file: descriptor_pb2.FileDescriptorProto) -> Iterator[tuple[Path, str]]:
    package = file.package
    for index, message in enumerate(file.message_type):
        yield from _message_paths(message, (_FILE_MESSAGES, index), package)
    for index, enum in enumerate(file.enum_type):
        yield from _enum_paths(enum, (_FILE_ENUMS, index), package)
    for index, service in enumerate(file.service):
        name = _scoped(package, service.name)
        yield (_FILE_SERVICES, index), name
        for number, method in enumerate(service.method):
            yield (_FILE_SERVICES, index, _SERVICE_METHODS, number), f"{name}.{method.name}"


def leading_comments(files: bytes) -> dict[str, str]:
    """Full name -> its leading comment, for every element of the set that has one."""
    found: dict[str, str] = {}
    for file in descriptor_pb2.FileDescriptorSet.FromString(files).file:
        names = dict(_file_paths(file))
        for location in file.source_code_info.location:
            name = names.get(tuple(location.path))
            if name is not None and location.leading_comments:
                found[name] = location.leading_comments
    return found


def comment_lines(comments: Mapping[str, str], name: str, pad: str = "") -> list[str]:
    """``name``'s leading comment as grpcurl prints it: ``//`` lines at ``pad``."""
    text = comments.get(name)
    if not text:
        return []
    lines = text.split("\n")
    if lines and lines[0] == "":
        lines = lines[1:]
    if lines and lines[-1] == "":
        lines = lines[:-1]
    spaced = (line if not line or line.startswith(" ") else " " + line for line in lines)
    return [f"{pad}//{line.rstrip(WHITESPACE)}" for line in spaced]
