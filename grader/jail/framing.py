"""Send and receive codec frames over a stream socket, with deadlines and size limits."""
from __future__ import annotations

import socket
import time

from .codec import PREFIX_SIZE, decode_message, encode_message, read_prefix
from .errors import ProtocolError


class Closed(Exception):
    """The other end closed the socket."""


class TimedOut(Exception):
    """No complete message before the deadline."""


class TooLarge(Exception):
    """The next message is larger than the reader allows; nothing of it was read past its prefix."""

    def __init__(self, size: int):
        super().__init__(f"a message of {size} bytes")
        self.size = size


def send(sock: socket.socket, message: dict, values: dict | None = None) -> None:
    sock.settimeout(None)
    sock.sendall(encode_message(message, values))


def _recv_exact(sock: socket.socket, n: int, deadline: float | None) -> bytes:
    chunks, got = [], 0
    while got < n:
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimedOut()
            sock.settimeout(remaining)
        else:
            sock.settimeout(None)
        try:
            chunk = sock.recv(min(n - got, 1 << 20))
        except socket.timeout:
            raise TimedOut() from None
        except (ConnectionResetError, BrokenPipeError):
            raise Closed() from None
        if not chunk:
            raise Closed()
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def recv(sock: socket.socket, deadline: float | None = None, max_bytes: int | None = None) -> tuple[dict, dict]:
    """Read one frame; raise TimedOut, Closed, ProtocolError, or TooLarge when it is over ``max_bytes``."""
    n_header, n_payload = read_prefix(_recv_exact(sock, PREFIX_SIZE, deadline))
    if max_bytes is not None and n_header + n_payload > max_bytes:
        raise TooLarge(n_header + n_payload)
    header = _recv_exact(sock, n_header, deadline)
    payload = _recv_exact(sock, n_payload, deadline) if n_payload else b""
    message, values = decode_message(header, payload)
    if not isinstance(message.get("op", ""), str):
        raise ProtocolError("message op is not a string")
    return message, values
