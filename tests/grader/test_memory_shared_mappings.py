"""Touched pages of shared and file-backed writable mappings count toward a call's memory (issue 36, item 6): the
score matrix written into shared memory an earlier cell filled (``mmap.mmap(-1, n)``), into files of the scratch
folder mapped shared, or into the private copies of a file mapping made beforehand, is charged to the call, as
root (the jail's cgroup) and without root (the user namespace's /proc path), also when the call takes the write
permission away before it returns. Before, only anonymous private mappings were read, and each of these held
about 5 MiB."""

import os

import pytest
import torch

from grader.assignments.recursive_attention.blockwise import MEMORY_ALLOWANCE
from grader.jail.limits import Limits
from tests.grader.jail_session import open_session

MiB = 2**20
CELLS = [
    (
        0,
        """
import ctypes, math, mmap
import torch
MiB = 2**20
shared = mmap.mmap(-1, 64 * MiB)  # MAP_SHARED | MAP_ANONYMOUS, written now: resident before any call
shared.write(b'\\1' * len(shared))
locked = mmap.mmap(-1, 64 * MiB)
locked.write(b'\\1' * len(locked))
files = []
for k in range(3):  # files of the scratch folder, each under the jail's file-size limit, mapped shared
    with open(f'/tmp/scratch/scores{k}', 'w+b') as f:
        f.truncate(15 * MiB)
        files.append(mmap.mmap(f.fileno(), 15 * MiB))
    files[-1].write(b'\\1' * (15 * MiB))
with open('/tmp/scratch/scores0', 'r+b') as f:  # a private mapping of a file, its pages copied by writing them
    private = mmap.mmap(f.fileno(), 15 * MiB, flags=mmap.MAP_PRIVATE)
private.write(b'\\2' * len(private))


def attend(q, K, V, buffers):  # the score matrix of q's rows, split in row blocks over the buffers, softmax in place
    out, start = [], 0
    for buf in buffers:
        rows = min(len(buf) // (8 * K.shape[0]), q.shape[0] - start)
        s = torch.frombuffer(buf, dtype=torch.float64, count=rows * K.shape[0]).view(rows, K.shape[0])
        torch.matmul(q[start:start + rows], K.T, out=s)
        s.div_(math.sqrt(q.shape[-1])).sub_(s.amax(-1, keepdim=True)).exp_()
        out.append(s.div_(s.sum(-1, keepdim=True)) @ V)
        start += rows
    return torch.cat(out)


def in_shared_memory(q, K, V, block_size):
    return attend(q, K, V, [shared])


def in_shared_memory_then_read_only(q, K, V, block_size):
    y = attend(q, K, V, [locked])
    libc = ctypes.CDLL(None, use_errno=True)
    address = ctypes.addressof(ctypes.c_char.from_buffer(locked))
    assert libc.mprotect(ctypes.c_void_p(address), ctypes.c_size_t(len(locked)), 1) == 0  # PROT_READ
    return y


def in_shared_files(q, K, V, block_size):
    return attend(q, K, V, files)


def in_private_copies(q, K, V, block_size):
    return attend(q, K, V, [private])
""",
    )
]


def _peaks(student):
    g = torch.Generator().manual_seed(0)
    q, K, V = (torch.randn(*shape, generator=g, dtype=torch.float64) for shape in ((256, 4), (32768, 4), (32768, 4)))
    rows = {
        "in_shared_memory": 256,
        "in_shared_memory_then_read_only": 256,
        "in_shared_files": 180,
        "in_private_copies": 60,
    }  # rows whose scores fill the buffers: 64, 64, 45 and 15 MiB
    peaks = {}
    for name, n in rows.items():
        reply = student.call(name, [q[:n], K, V, 512], measure_memory=True)
        want = torch.softmax(q[:n] @ K.T / 2, dim=-1) @ V
        assert torch.allclose(reply.value, want), name  # the work was done, in the buffers
        peaks[name] = reply.peak_bytes / MiB
    return peaks


@pytest.mark.parametrize("rootless", [False, True], ids=["root", "user-namespace"])
def test_scores_written_into_shared_or_file_mappings_made_earlier_count_as_held_by_the_call(rootless):
    if not rootless and os.geteuid() != 0:
        pytest.skip("the root path needs root")
    with open_session(CELLS, Limits(), rootless=rootless) as session:
        assert [r["status"] for r in session.reports()] == ["ok"], session.reports()
        peaks = _peaks(session)
    allowance = MEMORY_ALLOWANCE / MiB
    assert peaks["in_shared_memory"] > allowance, peaks
    assert peaks["in_shared_memory_then_read_only"] > allowance, peaks
    assert peaks["in_shared_files"] > allowance, peaks
    assert 15 <= peaks["in_private_copies"] < allowance, peaks
