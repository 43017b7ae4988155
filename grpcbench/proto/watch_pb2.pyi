from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class CacheMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    OBJECTS: _ClassVar[CacheMode]
    SERIALIZED: _ClassVar[CacheMode]
    FRAME: _ClassVar[CacheMode]
    TWO_WRITES: _ClassVar[CacheMode]
OBJECTS: CacheMode
SERIALIZED: CacheMode
FRAME: CacheMode
TWO_WRITES: CacheMode

class WatchRequest(_message.Message):
    __slots__ = ("folder", "cache")
    FOLDER_FIELD_NUMBER: _ClassVar[int]
    CACHE_FIELD_NUMBER: _ClassVar[int]
    folder: str
    cache: CacheMode
    def __init__(self, folder: _Optional[str] = ..., cache: _Optional[_Union[CacheMode, str]] = ...) -> None: ...

class KV(_message.Message):
    __slots__ = ("key", "value", "revision")
    KEY_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    key: str
    value: bytes
    revision: int
    def __init__(self, key: _Optional[str] = ..., value: _Optional[bytes] = ..., revision: _Optional[int] = ...) -> None: ...

class WatchResponse(_message.Message):
    __slots__ = ("kv",)
    KV_FIELD_NUMBER: _ClassVar[int]
    kv: _containers.RepeatedCompositeFieldContainer[KV]
    def __init__(self, kv: _Optional[_Iterable[_Union[KV, _Mapping]]] = ...) -> None: ...

class SeparatedWatchResponse(_message.Message):
    __slots__ = ("part", "parts", "kv")
    PART_FIELD_NUMBER: _ClassVar[int]
    PARTS_FIELD_NUMBER: _ClassVar[int]
    KV_FIELD_NUMBER: _ClassVar[int]
    part: int
    parts: int
    kv: KV
    def __init__(self, part: _Optional[int] = ..., parts: _Optional[int] = ..., kv: _Optional[_Union[KV, _Mapping]] = ...) -> None: ...
