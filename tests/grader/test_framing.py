"""The framed stream between the grader and the jail (grader.jail.framing.Channel): whatever way the bytes
arrive (several frames in one read, a frame in many pieces), each recv returns exactly the next frame;
an oversized frame is refused from its prefix, and a silent or closed peer ends the wait."""

import socket
import threading
import time

import numpy as np
import pytest

from grader.errors import ProtocolError
from grader.jail import codec, framing


@pytest.fixture
def pair():
    a, b = socket.socketpair()
    yield a, framing.Channel(b)
    a.close()
    b.close()


def frame(i: int) -> bytes:
    return codec.encode_message({"op": "n", "i": i}, {"x": np.arange(i + 3, dtype=np.int64)})


def test_frames_that_arrive_together_are_returned_one_by_one_in_order(pair):
    raw, channel = pair
    raw.sendall(b"".join(frame(i) for i in range(3)))
    for i in range(3):
        message, values = channel.recv(time.monotonic() + 5)
        assert message["i"] == i and values["x"].tolist() == list(range(i + 3))
        assert channel.pending() == (i < 2)  # a frame still buffered: the caller must not wait on the socket


def test_a_frame_that_arrives_in_pieces_is_returned_whole(pair):
    raw, channel = pair
    data = frame(40)

    def trickle():
        for k in range(0, len(data), 7):
            raw.sendall(data[k : k + 7])
            time.sleep(0.001)

    writer = threading.Thread(target=trickle)
    writer.start()
    message, values = channel.recv(time.monotonic() + 10)
    writer.join()
    assert message["i"] == 40 and values["x"].tolist() == list(range(43)) and not channel.pending()


def test_a_frame_over_the_limit_is_refused_from_its_prefix_without_waiting_for_its_body(pair):
    raw, channel = pair
    raw.sendall(codec.MAGIC + (10).to_bytes(4, "little") + (50 * 2**20).to_bytes(8, "little"))
    start = time.monotonic()
    with pytest.raises(framing.TooLarge) as refused:
        channel.recv(time.monotonic() + 5, max_bytes=2**20)
    assert refused.value.size == 50 * 2**20 + 10 and time.monotonic() - start < 4


def test_a_bad_prefix_is_a_protocol_error_and_is_consumed(pair):
    raw, channel = pair
    raw.sendall(b"XXXX" + bytes(12) + frame(1))
    with pytest.raises(ProtocolError):
        channel.recv(time.monotonic() + 5)
    # the next read starts after the refused prefix, as a reader of exact sizes would
    assert channel.recv(time.monotonic() + 5)[0]["i"] == 1


def test_silence_times_out_and_a_closed_peer_is_closed(pair):
    raw, channel = pair
    raw.sendall(frame(2)[:5])  # a partial prefix, then nothing
    with pytest.raises(framing.TimedOut):
        channel.recv(time.monotonic() + 0.2)
    raw.close()
    with pytest.raises(framing.Closed):
        channel.recv(time.monotonic() + 5)


def test_send_writes_one_whole_frame(pair):
    raw, channel = pair
    channel.send({"op": "m"}, {"v": [1.5, "s"]})
    head = raw.recv(codec.PREFIX_SIZE)
    n_header, n_payload = codec.read_prefix(head)
    body = b""
    while len(body) < n_header + n_payload:
        body += raw.recv(65536)
    message, values = codec.decode_message(body[:n_header], body[n_header:])
    assert message["op"] == "m" and values["v"] == [1.5, "s"]
