"""Send and receive codec frames over a stream socket, with deadlines and size limits.

A :class:`Channel` keeps what it has read past the frame it returned, so a small frame usually costs one
``recv`` system call (read without blocking; the socket is waited on only when nothing has arrived yet),
and the socket stays in blocking mode (no timeout switched on and off at every read)."""

from __future__ import annotations

import select
import socket
import time

from .codec import PREFIX_SIZE, decode_message, encode_message, read_prefix
from .errors import ProtocolError

READ_AHEAD = 1 << 16  # read at most this much before a frame's size is known (the frames are mostly small)
MAX_READ = 1 << 20  # and at most this much at once of a frame whose size is known


class Closed(Exception):
    """The other end closed the socket."""


class TimedOut(Exception):
    """No complete message before the deadline."""


class TooLarge(Exception):
    """The next message is larger than the reader allows; its body was not read (only what arrived with
    its prefix, at most READ_AHEAD bytes)."""

    def __init__(self, size: int):
        super().__init__(f"a message of {size} bytes")
        self.size = size


class Channel:
    """One end of a framed stream socket: ``send`` writes a whole frame, ``recv`` returns the next one."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        sock.setblocking(True)
        self._buffer = bytearray()

    def fileno(self) -> int:  # select() takes a Channel as it takes its socket
        return self.sock.fileno()

    def close(self) -> None:
        self.sock.close()
        self._buffer.clear()

    def pending(self) -> bool:
        """Bytes of a next frame arrived with an earlier read, so waiting on the socket would be wrong."""
        return bool(self._buffer)

    def send(self, message: dict, values: dict | None = None) -> None:
        self.sock.sendall(encode_message(message, values))

    def send_frame(self, frame: bytes) -> None:
        """Send a frame already encoded (by :func:`grader.jail.codec.encode_message`)."""
        self.sock.sendall(frame)

    def _read(self, limit: int, deadline: float | None) -> None:
        """Append what has arrived (at most ``limit`` bytes), waiting for it until ``deadline``."""
        while True:
            try:
                chunk = self.sock.recv(limit, socket.MSG_DONTWAIT)
            except BlockingIOError:
                chunk = None
            except (ConnectionResetError, BrokenPipeError):
                raise Closed() from None
            if chunk is not None:
                if not chunk:
                    raise Closed()
                self._buffer += chunk
                return
            if deadline is None:
                select.select([self.sock], [], [])
                continue
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([self.sock], [], [], remaining)[0]:
                if time.monotonic() >= deadline:
                    raise TimedOut()

    def recv(self, deadline: float | None = None, max_bytes: int | None = None) -> tuple[dict, dict]:
        """Read one frame; raise TimedOut, Closed, ProtocolError, or TooLarge when it is over ``max_bytes``."""
        return decode(*self.recv_frame(deadline, max_bytes))

    def recv_frame(self, deadline: float | None = None, max_bytes: int | None = None) -> tuple[int, memoryview]:
        """Read one frame without decoding it: ``(header length, header and payload)``, for :func:`decode`."""
        while len(self._buffer) < PREFIX_SIZE:
            self._read(READ_AHEAD, deadline)
        prefix = bytes(self._buffer[:PREFIX_SIZE])
        del self._buffer[:PREFIX_SIZE]  # consumed, as a reader of exact sizes would have, even when refused below
        n_header, n_payload = read_prefix(prefix)
        size = n_header + n_payload
        if max_bytes is not None and size > max_bytes:
            raise TooLarge(size)
        while len(self._buffer) < size:
            self._read(min(size - len(self._buffer), MAX_READ), deadline)
        if len(self._buffer) == size:  # the usual case: nothing of a next frame came with it
            frame, self._buffer = self._buffer, bytearray()
        else:
            frame = self._buffer[:size]
            del self._buffer[:size]
        return n_header, memoryview(frame)  # the frame is ours alone now: nothing resizes it while it is read


def decode(n_header: int, view: memoryview) -> tuple[dict, dict]:
    """The message and values of a frame ``Channel.recv_frame`` returned."""
    message, values = decode_message(bytes(view[:n_header]), view[n_header:])
    if not isinstance(message.get("op", ""), str):
        raise ProtocolError("message op is not a string")
    return message, values
