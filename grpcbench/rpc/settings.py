"""``--call`` and its companions as given: ghz's options, from the command line or a scenario.

The command line and a scenario's ``[call]``/``[tls]`` tables give the same
things; the command line wins field by field. ``rpc.planned`` checks them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from grpcbench.rpc.security import ChannelSecurity


@dataclass(frozen=True)
class CallSettings:
    """What names a method call and how to send it; None = not given."""

    method: str | None = None  # package.Service/Method (or package.Service.Method)
    proto: str | None = None
    import_paths: tuple[str, ...] = ()
    protoset: str | None = None
    data: str | None = None  # JSON text, maybe with ghz template actions
    metadata: str | None = None  # JSON object text; may hold credentials
    stream_messages: int | None = None
    security: ChannelSecurity = field(default_factory=ChannelSecurity)

    def over(self, base: CallSettings) -> CallSettings:
        """These settings where given, ``base``'s (a scenario file's) elsewhere."""
        return CallSettings(
            method=self.method or base.method,
            proto=self.proto or base.proto,
            import_paths=self.import_paths or base.import_paths,
            protoset=self.protoset or base.protoset,
            data=self.data if self.data is not None else base.data,
            metadata=self.metadata if self.metadata is not None else base.metadata,
            stream_messages=(
                self.stream_messages if self.stream_messages is not None else base.stream_messages
            ),
            security=self.security if self.security.tls else base.security,
        )


@dataclass(frozen=True)
class CallArgs:
    """The command line's --call options, raw (files not read yet)."""

    call: str | None = None
    proto: str | None = None
    import_paths: str | None = None  # comma-separated, as ghz's -i
    protoset: str | None = None
    data: str | None = None
    data_file: str | None = None
    metadata: tuple[str, ...] = ()  # KEY=VALUE or JSON objects
    metadata_file: str | None = None
    stream_messages: int | None = None
    security: ChannelSecurity = field(default_factory=ChannelSecurity)

    def settings(self) -> CallSettings:
        """With -D and -M read (a UsageError names a file that cannot be read)."""
        from grpcbench.rpc.call import read_data, read_metadata

        given = self.data is not None or self.data_file is not None
        has_metadata = bool(self.metadata) or self.metadata_file is not None
        return CallSettings(
            method=self.call,
            proto=self.proto,
            import_paths=tuple(
                p.strip() for p in (self.import_paths or "").split(",") if p.strip()
            ),
            protoset=self.protoset,
            data=read_data(self.data, self.data_file) if given else None,
            metadata=read_metadata(self.metadata, self.metadata_file) if has_metadata else None,
            stream_messages=self.stream_messages,
            security=self.security,
        )
