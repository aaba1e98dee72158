"""Stand-in answers remembered by the grading process, across calls and notebooks (issue 38).

The checks draw the same cases for every notebook, so a correct ``forward`` asks the grader's ``recurrent_unit``
the very same questions in every notebook of a batch: about 400 stand-in requests a correct ``sequence_models``
notebook, each decoded, estimated, computed, logged and encoded again. A stand-in (grader.checking.standins) is a
fixed function of its arguments, so the grader keeps the answer it gave to each request's exact bytes and sends
it again when the same bytes come in.

Nothing the student sees or is charged changes:

- The key is a 128-bit BLAKE2b digest of the whole request frame (header and every array's bytes), as the jail
  sent it; a request with other bytes is a miss, and is computed as before. An entry is used only where the
  call's stand-in of that name is the very object that computed it (``is``), so a check that serves another
  function under the same name (``SECOND_UNIT``, ``_peaked(step)``) never gets another's answer.
- The allowance is applied as before the answer was remembered: the same size estimate is refused when the
  call's remaining budget is smaller, and the CPU time the computation took when it was made is charged to the
  call again, so a call costs the student what it did when the grader computed it.
- The grader's record of the call (``Served``: the name and argument shapes) is appended as before.
- Only answers of :class:`grader.checking.standins.StandIn` (fixed functions) are kept, and only small ones:
  at most ``MAX_ANSWER_BYTES`` each and ``MAX_BYTES`` in all; past that the store starts again empty.

Everything here happens in the grading process: the jail sends and receives exactly the frames it did before.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass

from grader.checking.calls import Served, StudentOverspent

MAX_ANSWER_BYTES = 256 * 2**10
MAX_BYTES = 64 * 2**20


@dataclass(frozen=True)
class Answer:
    """What the grader did for one request: the stand-in that answered, the size estimate the allowance was
    asked about, the record it kept (None for a backward pass), the CPU seconds it spent, and the reply frame."""

    name: str
    handler: object
    elements: int
    work: float
    served: Served | None
    seconds: float
    frame: bytes


_REQUEST = b'{"op":"helper",'  # how the jail's stand-ins begin a request's header (grader.jail.child)


def is_request(frame) -> bool:
    """Whether a frame may be a stand-in request (a student's own large reply is never hashed)."""
    return frame[: len(_REQUEST)] == _REQUEST


def digest(frame) -> bytes:
    """The key of a request frame (bytes or a memoryview of them)."""
    return hashlib.blake2b(frame, digest_size=16).digest()


class Remembered:
    """The answers one grading process has given, by request digest (shared by its grading threads)."""

    def __init__(self, max_bytes: int = MAX_BYTES, max_answer_bytes: int = MAX_ANSWER_BYTES):
        self.max_bytes, self.max_answer_bytes = max_bytes, max_answer_bytes
        self._answers: dict[bytes, Answer] = {}
        self._bytes = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._answers)

    def get(self, key: bytes, stand_ins) -> Answer | None:
        """The answer remembered for ``key`` when this call's stand-in of its name is the one that gave it."""
        answer = self._answers.get(key)
        if answer is None or stand_ins is None or stand_ins.get(answer.name) is not answer.handler:
            return None
        return answer

    def replay(self, key: bytes, stand_ins, allowance, log: list) -> bytes | None:
        """The reply frame remembered for ``key`` (None: compute it), the call charged as serve_helper charged it:
        the same refusal of the same estimate (StudentOverspent), the same Served record, the same CPU seconds."""
        answer = self.get(key, stand_ins)
        if answer is None:
            return None
        refused = allowance.refusal(answer.name, answer.elements, answer.work)
        if refused:
            raise StudentOverspent(refused)
        if answer.served is not None:
            log.append(answer.served)
        allowance.charge(answer.seconds)
        return answer.frame

    def remember(self, key: bytes, name: str, done: dict, frame: bytes) -> None:
        """Keep the reply ``frame`` to the request ``key`` with what serve_helper recorded doing for it (``done``;
        nothing is kept where it computed nothing: no such stand-in, or a refused request)."""
        if "seconds" in done:
            self.keep(
                key,
                Answer(
                    name, done["handler"], done["elements"], done["work"], done.get("served"), done["seconds"], frame
                ),
            )

    def keep(self, key: bytes, answer: Answer) -> None:
        """Remember ``answer`` under ``key`` when a fixed function gave it and it is small enough."""
        from grader.checking.standins import StandIn  # torch: the grading process has it already

        size = len(answer.frame) + len(key) + 200
        if type(answer.handler) is not StandIn or len(answer.frame) > self.max_answer_bytes:
            return
        with self._lock:
            if self._bytes + size > self.max_bytes:
                self._answers.clear()
                self._bytes = 0
            if key not in self._answers:
                self._answers[key] = answer
                self._bytes += size


ANSWERS = Remembered()

__all__ = ["ANSWERS", "Answer", "Remembered", "digest"]
