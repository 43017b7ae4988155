from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ListObjectsRequest(_message.Message):
    __slots__ = ("bucket", "prefix")
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    PREFIX_FIELD_NUMBER: _ClassVar[int]
    bucket: str
    prefix: str
    def __init__(self, bucket: _Optional[str] = ..., prefix: _Optional[str] = ...) -> None: ...

class ObjectInfo(_message.Message):
    __slots__ = ("key", "size", "etag", "last_modified")
    KEY_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    ETAG_FIELD_NUMBER: _ClassVar[int]
    LAST_MODIFIED_FIELD_NUMBER: _ClassVar[int]
    key: str
    size: int
    etag: str
    last_modified: int
    def __init__(self, key: _Optional[str] = ..., size: _Optional[int] = ..., etag: _Optional[str] = ..., last_modified: _Optional[int] = ...) -> None: ...

class ListObjectsResponse(_message.Message):
    __slots__ = ("objects",)
    OBJECTS_FIELD_NUMBER: _ClassVar[int]
    objects: _containers.RepeatedCompositeFieldContainer[ObjectInfo]
    def __init__(self, objects: _Optional[_Iterable[_Union[ObjectInfo, _Mapping]]] = ...) -> None: ...

class SaveObjectsResponse(_message.Message):
    __slots__ = ("saved",)
    SAVED_FIELD_NUMBER: _ClassVar[int]
    saved: int
    def __init__(self, saved: _Optional[int] = ...) -> None: ...
