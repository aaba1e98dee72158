"""What the corpus test watches from outside while the corpus batch runs: the sandbox processes it leaves
behind, the resources its sandbox users hold (ResourceWatch), and the connections its network attacks reach
(Listener, on the loopback port the entries aim at)."""

import os
import socket
import threading
import time
from pathlib import Path

from grader.sandbox.client import SANDBOX_UID
from grader.sandbox.procfs import stat_fields

from .build import PORT

SANDBOX_UIDS = range(SANDBOX_UID, SANDBOX_UID + 6000)  # one per worker slot when grading as root


def _parent(pid: int | str) -> int:
    """The parent pid of ``pid``, from /proc (OSError, ValueError or IndexError when it has gone)."""
    return int(stat_fields(f"/proc/{pid}/stat")[1])


def _process_table() -> dict[int, tuple[int, int, bytes]]:
    """pid -> (parent pid, uid, command line) of every process."""
    table = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            uid = os.stat(f"/proc/{pid}").st_uid
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
            ppid = _parent(pid)
        except (OSError, ValueError, IndexError):
            continue
        table[int(pid)] = (ppid, uid, cmd)
    return table


def _ancestors(table, pid: int):
    seen = set()
    while pid in table and pid not in seen and pid > 1:
        seen.add(pid)
        pid = table[pid][0]
        yield pid


def sandbox_processes() -> list[str]:
    """Sandboxes and zygotes still alive that this test process is answerable for: those that descend from it
    (except the idle zygotes it keeps on purpose: session fixtures and in-process batch graders are its direct
    children), and any sandbox process that escaped its zygote (no zygote among its ancestors: a daemon that
    outlived its jail). Other test processes' jails, running beside this one (pytest-xdist), are theirs."""
    table, me, found = _process_table(), os.getpid(), []
    for pid, (ppid, uid, cmd) in table.items():
        is_zygote = b"grader.jail.zygote" in cmd
        if not (uid in SANDBOX_UIDS or is_zygote):
            continue
        ancestors = list(_ancestors(table, pid))
        ours = me in ancestors and not (is_zygote and ppid == me)
        escaped = uid in SANDBOX_UIDS and not any(b"grader.jail.zygote" in table[a][2] for a in ancestors if a in table)
        if ours or escaped:
            command = cmd[:80].replace(b"\0", b" ").decode(errors="replace")
            found.append(f"{pid} (uid {uid}, parent {ppid}: {command})")  # what it was, if one is left
    return found


class ResourceWatch:
    """Samples the sandbox users' processes (SANDBOX_UIDS)
    while the batch runs: the most tasks one user held at once, and the most private memory held by one
    process and by one user's processes together.

    Tasks come from /proc/PID/status, which is cheap even under a fork bomb; private memory needs
    smaps_rollup (a walk of the page tables), so it is read for the largest processes only. The watch
    runs at real-time priority where it may: a fork bomb's thousands of runnable processes would
    otherwise starve it until the bomb is over. Only the sandbox users of this test process's own batch count:
    a uid is this batch's when one of its processes descends from this process (tests running beside it, as
    pytest-xdist's workers do, grade with other uids)."""

    LARGEST = 16
    RECHECK_S = 2.0  # how long a uid found to be another process's is taken as such

    def __init__(self, period_s: float = 0.05):
        self.period_s, self.stop = period_s, False
        self.owned: dict[int, tuple[bool, float]] = {}  # uid -> (this batch's?, when found)
        self.tasks, self.process_mb, self.user_mb, self.samples_with_sandboxes = 0, 0.0, 0.0, 0
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    @staticmethod
    def _private_mb(pid: str) -> float:
        kb = 0
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith(("Private_Clean:", "Private_Dirty:")):
                    kb += int(line.split()[1])
        return kb / 1024

    @staticmethod
    def _descends_from_me(fields: dict) -> bool:
        me, ppid, seen = os.getpid(), int(fields["PPid"]), set()
        while ppid > 1 and ppid not in seen:
            if ppid == me:
                return True
            seen.add(ppid)
            try:
                ppid = _parent(ppid)  # only the ancestors are read: cheap even under a fork bomb
            except (OSError, ValueError, IndexError):
                return False
        return False

    def _ours(self, uid: int, fields: dict) -> bool:
        known = self.owned.get(uid)
        if known is None or (not known[0] and time.monotonic() - known[1] > self.RECHECK_S):
            known = (self._descends_from_me(fields), time.monotonic())
            self.owned[uid] = known
        return known[0]

    def _sample(self) -> None:
        tasks, anon = {}, []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                if os.stat(f"/proc/{pid}").st_uid not in SANDBOX_UIDS:
                    continue
                with open(f"/proc/{pid}/status") as f:
                    fields = dict(line.split(":", 1) for line in f if ":" in line)
                uid = int(fields["Uid"].split()[0])
                if uid in SANDBOX_UIDS and self._ours(uid, fields):
                    tasks[uid] = tasks.get(uid, 0) + int(fields["Threads"])
                    anon.append((int(fields.get("RssAnon", "0 kB").split()[0]), pid, uid))
            except (OSError, KeyError, ValueError):
                continue
        if not tasks:
            return
        self.samples_with_sandboxes += 1
        self.tasks = max(self.tasks, *tasks.values())
        memory = {}
        for _, pid, uid in sorted(anon, reverse=True)[: self.LARGEST]:
            try:
                private = self._private_mb(pid)
            except OSError:
                continue
            memory[uid] = memory.get(uid, 0.0) + private
            self.process_mb = max(self.process_mb, private)
        self.user_mb = max(self.user_mb, *memory.values(), 0.0)

    def _run(self):
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))  # 0: this thread
        except OSError:
            try:
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), -20)
            except OSError:
                pass
        while not self.stop:
            self._sample()
            time.sleep(self.period_s)

    def close(self):
        self.stop = True
        self.thread.join()


class Listener:
    """A loopback server that records every connection it accepts."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", PORT))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.connections, self.stop = [], False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop:
            try:
                self.connections.append(self.sock.accept()[1])
            except OSError:
                pass

    def close(self):
        self.stop = True
        self.thread.join()
        self.sock.close()
