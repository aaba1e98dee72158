"""The batch's own workers share what every one of them would otherwise start for itself (issue 38): they are
forked from one forkserver that imported torch and the checks, and they ask one zygote for their jails. A
worker that finds that zygote gone starts one of its own, so no notebook is lost to it; each worker sees the
environment the batch has when it starts its pool; a batch that reuses every result starts neither."""

import json
import os
import shutil
import signal

from grader.batch import pool
from grader.batch.run import BatchConfig, run_batch
from grader.sandbox.procfs import stat_fields


def _processes() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, command line) of every process this user can see."""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                ppid = int(stat_fields(f"/proc/{entry}/stat")[1])
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    found[int(entry)] = (ppid, f.read().replace(b"\0", b" ").decode(errors="replace"))
            except (OSError, ValueError, IndexError):
                pass
    return found


def _zygotes_of(root: int, besides=()) -> list[int]:
    """The zygotes among ``root``'s descendants (not their forked jails, whose command line is the same), but
    those in ``besides`` (this test process's own, which other tests keep for the session)."""
    procs = _processes()

    def descends(pid: int) -> bool:
        seen = set()
        while pid not in (0, 1) and pid not in seen:
            seen.add(pid)
            if pid == root:
                return True
            pid = procs.get(pid, (0, ""))[0]
        return False

    # A zygote's parent is a live grading process. A jail's processes share the zygote's command line; one whose
    # parent has just exited (a zombie, whose command line reads empty) while it is itself still ending must
    # not count: a jail's ending runs on its worker's CPU (grader.sandbox.cpus), so a snapshot taken right after
    # a notebook is graded can catch one.
    def parent_is_grader(ppid: int) -> bool:
        command = procs.get(ppid, (0, ""))[1]
        return bool(command.strip()) and "grader.jail.zygote" not in command

    return [
        pid
        for pid, (ppid, cmd) in procs.items()
        if "grader.jail.zygote" in cmd and pid not in besides and parent_is_grader(ppid) and descends(pid)
    ]


def _folder(tmp_path, notebook, count: int):
    folder = tmp_path / "in"
    folder.mkdir()
    for i in range(count):
        shutil.copy(notebook, folder / f"s{i}.ipynb")
    return folder


def _totals(out) -> dict[str, tuple]:
    return {
        p.stem: (json.loads(p.read_text())["status"], json.loads(p.read_text())["score"])
        for p in sorted((out / "results").glob("*.json"))
    }


def _described(pids) -> dict:
    """pid -> its command line and those of its ancestors, for a failure message."""
    procs, found = _processes(), {}
    for pid in pids:
        chain, at = [], pid
        while at in procs and len(chain) < 6:
            chain.append((at, procs[at][1][:90]))
            at = procs[at][0]
        found[pid] = chain
    return found


def test_two_workers_ask_one_zygote_for_their_jails(released, tmp_path):
    seen, before = [], _zygotes_of(os.getpid())

    def note(*args):
        found = _zygotes_of(os.getpid(), before)
        seen.append(found if len(found) == 1 else _described(found))

    run_batch(
        BatchConfig(str(_folder(tmp_path, released[1], 4)), "sequence_models", str(tmp_path / "out"), workers=2),
        progress=note,
    )
    assert len(seen) == 4 and all(len(z) == 1 for z in seen), seen  # one for both workers, all along
    assert {status for status, _ in _totals(tmp_path / "out").values()} == {"graded"}


def test_a_worker_that_finds_the_shared_zygote_gone_grades_on_with_one_of_its_own(released, tmp_path):
    folder = _folder(tmp_path, released[1], 3)
    run_batch(BatchConfig(str(folder), "sequence_models", str(tmp_path / "plain"), workers=1))
    killed, before = [], _zygotes_of(os.getpid())

    def kill_the_zygote(*args):
        if not killed:
            # The batch's shared zygote is this process's own child (a worker's own would be the worker's); a
            # full-suite run once found two zygotes descending from this process here: say which if it recurs.
            procs = _processes()
            found = [pid for pid in _zygotes_of(os.getpid(), before) if procs.get(pid, (0, ""))[0] == os.getpid()]
            assert len(found) == 1, _described(_zygotes_of(os.getpid(), before))
            os.kill(found[0], signal.SIGKILL)  # the zygote alone: a jail already running goes on
            killed.append(found[0])

    run_batch(
        BatchConfig(str(folder), "sequence_models", str(tmp_path / "killed"), workers=1), progress=kill_the_zygote
    )
    assert killed
    assert _totals(tmp_path / "killed") == _totals(tmp_path / "plain")
    assert {status for status, _ in _totals(tmp_path / "plain").values()} == {"graded"}


def test_each_worker_takes_the_environment_the_batch_has_when_it_starts_them(released, tmp_path, monkeypatch):
    """The forkserver keeps the environment it started with; a worker forked from it takes the batch's current
    one (here: where the drawn examples are kept, which a worker writes on its first grade)."""
    folder = _folder(tmp_path, released[1], 1)
    for name in ("first", "second"):
        monkeypatch.setenv("SEQGRADE_CACHE_DIR", str(tmp_path / f"cache-{name}"))
        run_batch(BatchConfig(str(folder), "sequence_models", str(tmp_path / f"out-{name}"), workers=1))
        assert list((tmp_path / f"cache-{name}").glob("examples-*.json")), name


def test_a_batch_that_reuses_every_result_starts_no_worker_and_no_zygote(released, tmp_path, monkeypatch):
    folder = _folder(tmp_path, released[1], 2)
    run_batch(BatchConfig(str(folder), "sequence_models", str(tmp_path / "out"), workers=1))

    def refused(self):
        raise AssertionError("a zygote was started for a batch with nothing to grade")

    monkeypatch.setattr(pool.SharedZygote, "control", refused)
    report = run_batch(BatchConfig(str(folder), "sequence_models", str(tmp_path / "out"), workers=1))
    assert report.reused == 2 and report.graded == 0


def test_the_command_starts_the_workers_early_only_when_every_notebook_will_be_graded(released, tmp_path, monkeypatch):
    """`seqgrade batch` into a new output folder starts the forkserver and the zygote right after finding the
    notebooks (beside its own start-up); a second run, with results to reuse, starts them only if it grades."""
    from grader.cli import main

    started = []
    real = pool.start_early
    monkeypatch.setattr(pool, "start_early", lambda assignment: started.append(assignment) or real(assignment))
    folder = _folder(tmp_path, released[1], 2)
    command = [
        "batch",
        str(folder),
        "--assignment",
        "sequence_models",
        "--out",
        str(tmp_path / "out"),
        "--workers",
        "1",
    ]
    assert main(command) == 0 and started == ["sequence_models"]
    first = _totals(tmp_path / "out")
    assert main(command) == 0 and started == ["sequence_models"]  # everything reused: nothing started
    assert _totals(tmp_path / "out") == first and {s for s, _ in first.values()} == {"graded"}


def test_without_sockets_that_keep_messages_apart_each_worker_starts_its_own_zygote(released, tmp_path, monkeypatch):
    """Where a Unix socket cannot be SOCK_SEQPACKET, the workers cannot share a control socket: each one starts
    a zygote of its own, as a Dask worker does, and the batch grades as before."""
    from grader.sandbox import launch

    real = launch.launch_zygote

    def no_seqpacket(shared=False):
        if shared:
            raise OSError(93, "Protocol not supported")
        return real()

    monkeypatch.setattr(launch, "launch_zygote", no_seqpacket)
    seen, before = [], _zygotes_of(os.getpid())
    run_batch(
        BatchConfig(str(_folder(tmp_path, released[1], 2)), "sequence_models", str(tmp_path / "out"), workers=1),
        progress=lambda *a: seen.append(len(_zygotes_of(os.getpid(), before))),
    )
    assert seen == [1, 1] and {status for status, _ in _totals(tmp_path / "out").values()} == {"graded"}
