"""Control frames on one HTTP/2 connection (SETTINGS, WINDOW_UPDATE, PING, RST_STREAM,
GOAWAY), and draining it: GOAWAY's unprocessed calls go back to the channel."""

from __future__ import annotations

import time

from grpcbench.wire import control, frames, keepalive, status
from grpcbench.wire.connection_core import ConnectionCore
from grpcbench.wire.stream import (
    IDLE,
    WireStream,
    finish,
    requeued,
)


class ControlIn(ConnectionCore):
    """What control frames do to the connection and its calls (``connection_core``)."""

    def _control(self, frame_type: int, flags: int, stream_id: int, payload: bytes) -> None:
        if frame_type == frames.SETTINGS:
            values = control.settings(flags, stream_id, payload)
            if values is not None:
                self._settings(values)
        elif frame_type == frames.WINDOW_UPDATE:
            self._window_update(stream_id, control.window_increment(payload))
        elif frame_type == frames.PING:
            answer = control.ping_answer(flags, stream_id, payload)
            if answer is not None:
                self._write(answer)
        elif frame_type == frames.RST_STREAM:
            self._rst_stream(stream_id, control.rst_stream_code(stream_id, payload))
        elif frame_type == frames.GOAWAY:
            self._goaway(*control.goaway(stream_id, payload))
        else:
            control.check_other(frame_type, payload)

    def _settings(self, settings: list[tuple[int, int]]) -> None:
        for key, value in settings:
            if key == frames.SETTINGS_MAX_CONCURRENT_STREAMS:
                self.max_streams = value
            elif key == frames.SETTINGS_INITIAL_WINDOW_SIZE:
                self.send_flow.initial_window(value, self.streams.values())
                self.encoder.unary.clear()  # framed for the old window
            elif key == frames.SETTINGS_MAX_FRAME_SIZE:
                self.send_flow.max_frame = value
                self.encoder.unary.clear()
            elif key == frames.SETTINGS_HEADER_TABLE_SIZE:
                self.encoder.table_size(value)
        self._write(frames.frame(frames.SETTINGS, frames.ACK, 0))
        if not self.ready.done():
            self.ready.set_result(None)
        self.send_flow.unblock()
        self._start_pending()

    def _window_update(self, stream_id: int, increment: int) -> None:
        stream = None
        if stream_id:
            stream = self.streams.get(stream_id)
            if stream is None:
                return  # a stream that ended: its window no longer matters
        problem = self.send_flow.window_update(stream, increment)
        if problem and stream is not None:
            self._stream_error(stream, problem)
            return
        self.send_flow.unblock()

    def _rst_stream(self, stream_id: int, code: int) -> None:
        stream = self.streams.pop(stream_id, None)
        if stream is None:
            self._unknown_stream(stream_id)
            return
        self.send_flow.forget(stream)
        if code == frames.REFUSED_STREAM and stream.retryable and self.owner is not None:
            requeued(stream)  # never processed: send it again, once
            self.owner.resend([stream])
        elif code == frames.CANCEL and time.perf_counter() >= stream.deadline:
            # The server's deadline fired (grpc-go resets with CANCEL): past the call's
            # own deadline grpc reports it as the deadline, and so does this.
            finish(stream, status.DEADLINE_EXCEEDED, "Deadline Exceeded")
        else:
            finish(stream, status.from_rst_stream(code), f"RST_STREAM with error code {code}")
        self._after_close()

    def _goaway(self, last: int, code: int, debug: str) -> None:
        """No new streams here; the ones above ``last`` were not processed: resend them."""
        self.goaway_code = code
        keepalive.back_off(self.owner, code, debug)
        unprocessed = [s for sid, s in list(self.streams.items()) if sid > last]
        for stream in unprocessed:
            del self.streams[stream.id]
        self._drain(f"GOAWAY (error code {code}{': ' + debug if debug else ''})", unprocessed)

    def _drain(self, reason: str, unprocessed: list[WireStream] | None = None) -> None:
        self.draining = True
        self.close_reason = reason
        again = (unprocessed or []) + list(self.pending)
        self.pending.clear()
        retry = []
        for stream in again:
            self.send_flow.forget(stream)
            if stream.retryable and self.owner is not None:
                if stream.state == IDLE:  # pending here: never opened
                    stream.retryable = False
                else:
                    requeued(stream)
                retry.append(stream)
            else:
                finish(stream, status.UNAVAILABLE, f"not processed: {reason}")
        if self.owner is not None:
            self.owner.connection_closed(self)
            if retry:
                self.owner.resend(retry)
        self._after_close()
