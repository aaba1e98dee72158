"""What a command returns and where it prints: the exit codes, and standard output that outlives its reader."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

EXIT_OK, EXIT_USAGE, EXIT_SANDBOX = 0, 2, 3


class _ReaderMayGo:
    """Standard output that lets a command finish when its reader has gone (``| head``, a closed terminal):
    what a staff command stores and rewrites matters more than what it says, so what it says after that is
    dropped instead of stopping it between the two."""

    def __init__(self, stream):
        self._stream, self._gone = stream, False

    def write(self, text: str) -> int:
        if not self._gone:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._gone = True
        return len(text)

    def flush(self) -> None:
        if not self._gone:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._gone = True

    def __getattr__(self, name):  # isatty, encoding, fileno...: the stream's own
        return getattr(self._stream, name)


def make_console() -> "Console":
    from rich.console import Console

    return Console(file=_ReaderMayGo(sys.stdout))
