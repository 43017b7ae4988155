from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class EchoRequest(_message.Message):
    __slots__ = ("message", "repeat")
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    REPEAT_FIELD_NUMBER: _ClassVar[int]
    message: str
    repeat: int
    def __init__(self, message: _Optional[str] = ..., repeat: _Optional[int] = ...) -> None: ...

class EchoReply(_message.Message):
    __slots__ = ("message", "index")
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    message: str
    index: int
    def __init__(self, message: _Optional[str] = ..., index: _Optional[int] = ...) -> None: ...

class CollectReply(_message.Message):
    __slots__ = ("count", "joined")
    COUNT_FIELD_NUMBER: _ClassVar[int]
    JOINED_FIELD_NUMBER: _ClassVar[int]
    count: int
    joined: str
    def __init__(self, count: _Optional[int] = ..., joined: _Optional[str] = ...) -> None: ...
