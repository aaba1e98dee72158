"""The pre-loaded zygote: imports numpy and torch once, then forks one jailed process per submission.

It never imports the reference, the checks or any student's code: its children inherit its memory.
Started by :mod:`grader.sandbox.client` as ``python -m grader.jail.zygote FD`` with a clean
environment that pins every thread pool to one thread (a forked child of a parent that ran a
multi-threaded OpenMP op hangs on its next parallel op).
"""

from __future__ import annotations

import gc
import json
import os
import shutil
import signal
import socket
import sys
import tempfile
import traceback

if __name__ == "__main__":  # started as a program: numpy and torch are imported without the collector
    gc.disable()  # (see grader.collector); _warm_up freezes them and turns it back on before any jail is forked

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional  # noqa: E402,F401  (loaded before the fork, so students need not read it from disk)

from . import child, filesystem, isolation, root_plan
from .codec import decode_frame, encode_message
from .limits import Limits

NS_FLAGS = (
    isolation.CLONE_NEWNS
    | isolation.CLONE_NEWNET
    | isolation.CLONE_NEWIPC
    | isolation.CLONE_NEWUTS
    | isolation.CLONE_NEWPID
)
JAIL_FAILED = 70  # S's exit status when the jail's own code raised (S's set-up, or W's serve loop), never 0


def _warm_up() -> None:
    torch.set_num_threads(1)
    # A fixed mmap threshold (glibc raises it as large blocks are freed, so freed blocks of a loop stay
    # resident and a call's measured peak would depend on the calls before it): every allocation of
    # 128 KiB or more is mapped on its own and returned when freed. Inherited by every jail.
    isolation.fix_mmap_threshold(128 * 1024)
    x = torch.randn(8, 8, requires_grad=True)
    torch.softmax(x @ x.T, dim=-1).sum().backward()
    np.linalg.pinv(np.random.default_rng(0).standard_normal((6, 4)))
    # One round trip through the codec loads what it imports lazily (zipfile decodes npz member names
    # with encodings.cp437). Without a mount namespace the student's uid may be unable to read Python's
    # own files, so nothing the child runs may need the disk.
    decode_frame(encode_message({"op": "warm"}, {"a": np.zeros((2, 2)), "t": torch.ones(2, dtype=torch.bfloat16)}))
    # Everything imported so far lives as long as the zygote: the collector need not walk it again in
    # any jail, and forked jails keep sharing those pages (a collection would write to each object).
    gc.freeze()
    gc.enable()  # student code runs with the collector on, as it would anywhere


def _jail_child(spec: dict, limits: Limits, sock: socket.socket, scratch: str) -> None:
    """In S, the student's process: finish the jail, fork the worker, drop privileges (each), then serve."""
    os.setpgid(0, 0)  # the jail's own process group (M sets it too): killing it, or a student's killpg(0), spares M
    if limits.isolation == "namespaces":
        filesystem.enter_root(filesystem.STAGE)  # a private /proc, then the fresh root: the old one is gone
    isolation.set_rlimits(limits, cpu_s=limits.cpu_s, uid=os.getuid() if spec.get("uid") is None else spec["uid"])
    os.chdir(scratch)
    os.environ.clear()
    os.environ.update(
        {
            "HOME": scratch,
            "TMPDIR": scratch,
            "MPLCONFIGDIR": scratch,
            "MPLBACKEND": "Agg",
            "OMP_NUM_THREADS": "1",
            "PATH": "/usr/bin:/bin",
            "LANG": "C.UTF-8",
            # A Triton kernel a student writes runs in Triton's interpreter, on the CPU tensors the
            # grader sends, on every machine (so a verdict never depends on the grading machine's
            # GPU); triton reads this when a kernel is decorated. Its cache goes to the scratch.
            "TRITON_INTERPRET": "1",
            "TRITON_CACHE_DIR": os.path.join(scratch, ".triton"),
        }
    )
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    keep = sock.fileno()
    os.closerange(3, keep)
    os.closerange(keep + 1, 65536)
    # S is the init of the jail's PID namespace: it runs no student code, only reaps. The worker it forks
    # runs the notebook; when S is killed, everything in the namespace dies with it. Without a PID
    # namespace (--isolation rlimits) S becomes a subreaper, so orphans still come back to it, and M
    # sweeps up whatever outlives S.
    if limits.isolation != "namespaces":
        isolation.become_subreaper()
    # The worker is forked before privileges are dropped. The kernel counts RLIMIT_NPROC per uid across the
    # whole machine, and a jail of the same uid may still be dying (one whose student filled the allowance):
    # forked as that uid, the worker could fail to exist and S would end before any cell ran. As root (or,
    # rootless, in the jail's own user namespace, whose count is its own) the fork does not depend on them.
    worker = os.fork()
    isolation.drop_privileges(spec.get("uid"), spec.get("gid"))
    if worker == 0:
        child.serve(sock)
        os._exit(0)
    sock.close()
    ended = None  # how the first worker ended: passed on as S's own exit status
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            code = os.waitstatus_to_exitcode(ended) if ended is not None else 0
            os._exit(128 - code if code < 0 else code)  # a signal -n becomes 128 + n, as shells report it
        if pid == worker:
            ended = status


def _monitor(spec: dict, data: socket.socket, ctl: socket.socket, root: root_plan.Root) -> None:
    """In M: build the jail's namespaces and its root (``root``: what it holds), fork S, hand its pidfd to
    the grader, wait."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    os.setsid()
    isolation.set_parent_death_signal(signal.SIGKILL)
    isolation.pin_cpus(spec.get("cpus"))  # the grading thread's CPU: the two take turns (grader.sandbox.cpus)
    isolation.small_pages_only()  # measured memory and the time to make an array do not depend on huge pages
    limits = Limits(**spec["limits"])
    # As root, switch the student to an unprivileged uid; otherwise (or when asked, to test that path)
    # use a user namespace and clear every capability.
    real_root = os.geteuid() == 0 and not spec.get("rootless")
    groups = []
    if real_root:
        groups = isolation.join_new_cgroups(f"seqgrade-{os.getpid()}", limits.total_memory_mb * 2**20, limits.nproc)
    if limits.isolation == "namespaces":
        uid, gid = os.getuid(), os.getgid()
        isolation.unshare(NS_FLAGS | (0 if real_root else isolation.CLONE_NEWUSER))
        if not real_root:
            isolation.map_current_user(uid, gid)
        owner = (spec["uid"], spec["gid"]) if real_root else (0, 0)
        filesystem.build_root(root, spec["hide"], limits.scratch_mb, owner)
        scratch = filesystem.SCRATCH
    else:
        scratch = tempfile.mkdtemp(prefix="seqgrade-scratch-")
        if real_root:
            os.chown(scratch, spec["uid"], spec["gid"])
    if not real_root:
        spec = {**spec, "uid": None, "gid": None}
    without_pid_namespace = limits.isolation != "namespaces"
    if without_pid_namespace:
        isolation.become_subreaper()  # what leaves S's process group (setsid, double fork) comes back here
    pid = os.fork()
    if pid == 0:
        ctl.close()
        try:
            _jail_child(spec, limits, data, scratch)
        except BaseException:
            os._exit(JAIL_FAILED)
        finally:
            os._exit(0)
    data.close()
    try:
        os.setpgid(pid, pid)  # before the grader learns the pid, so its group kill can never reach M
    except OSError:  # S already gone: the grader finds the socket closed
        pass
    pidfd = os.pidfd_open(pid)
    socket.send_fds(ctl, [json.dumps({"pid": pid}).encode()], [pidfd])
    os.close(pidfd)
    _, status = os.waitpid(pid, 0)
    try:
        ctl.sendall(json.dumps({"exit_code": os.waitstatus_to_exitcode(status)}).encode())
    except OSError:
        pass
    if without_pid_namespace:
        isolation.kill_children()
        shutil.rmtree(scratch, ignore_errors=True)  # an ordinary folder here, not a tmpfs that vanishes with the jail
    # Every process of the jail is gone now (with a PID namespace, its init's end waits for all of them): the
    # grader, which waits for this socket to close before the next jail runs a cell (grader.sandbox.ending),
    # need not also wait for the empty cgroups to be removed (a few ms, as long as the kernel's RCU takes).
    ctl.close()
    isolation.leave_cgroups(groups)
    os._exit(0)


def main(control_fd: int) -> None:
    control = socket.socket(fileno=control_fd)
    _warm_up()
    root = root_plan.plan_root()  # after the preload: every library numpy and torch loaded is mapped now
    isolation.become_subreaper()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    control.sendall(b'{"ready": true}\n')
    while True:
        try:
            msg, fds, _, _ = socket.recv_fds(control, 1 << 16, 2)
        except OSError:
            return
        if not msg:
            return
        spec = json.loads(msg)
        data, ctl = (socket.socket(fileno=fd) for fd in fds)
        pid = os.fork()
        if pid == 0:
            control.close()
            try:
                _monitor(spec, data, ctl, root)
            except BaseException:
                try:
                    ctl.sendall(json.dumps({"setup_error": traceback.format_exc()[-2000:]}).encode())
                finally:
                    os._exit(70)
        data.close()
        ctl.close()


if __name__ == "__main__":
    main(int(sys.argv[1]))
