"""The sandbox's defences, each with the source edit that takes it away (for tests/corpus/ablate.py).

An ablation is mutation testing aimed at one defence: if the corpus still passes with the defence
gone, either the defence does nothing or the corpus has no attack it stops. Each edit names text that
must occur exactly once in the file, so an ablation fails loudly when the code it targets changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Corpus entries that are safe to grade with no jail at all (the in-process ablation runs student code
# inside the batch's own worker, as root): they patch, lie and read, but do not kill, hang, fork,
# allocate without bound, unmount or write outside the project's copy.
SAFE_WITHOUT_SANDBOX = (
    "honest-*",
    "wrong-*",
    "hostile-always_equal_object",
    "hostile-patch_numpy_allclose",
    "hostile-patch_torch_testing",
    "hostile-patch_builtins",
    "hostile-monkeypatch_student_view_of_torch",
    "hostile-ipython_input_transformer",
    "hostile-pickle_payload",
    "hostile-read_reference_and_others",
    "hostile-change_cwd_and_environment",
    "hostile-leak_environment_into_feedback",
)


@dataclass(frozen=True)
class Edit:
    path: str
    old: str
    new: str


@dataclass(frozen=True)
class Ablation:
    name: str
    defence: str
    edits: tuple[Edit, ...]
    select: tuple[str, ...] = ()  # corpus entries to grade; all when empty
    slow: bool = False  # also run the slow determinism test
    layers: tuple[str, ...] = field(default=())  # what else guards the same thing, where the edit removes several


ABLATIONS = (
    Ablation(
        "verdicts_outside",
        "checks run outside the student's process",
        (Edit("grader/batch/run.py", '    backend: str = "sandbox"\n', '    backend: str = "inprocess"\n'),),
        select=SAFE_WITHOUT_SANDBOX,
    ),
    Ablation(
        "network_namespace",
        "no network (a network namespace of its own)",
        (Edit("grader/jail/zygote.py", "    | isolation.CLONE_NEWNET\n", ""),),
    ),
    Ablation(
        "pid_namespace",
        "a PID namespace: killing the jail's init ends every process in it",
        (Edit("grader/jail/zygote.py", " | isolation.CLONE_NEWPID", ""),),
    ),
    Ablation(
        "fresh_root",
        "a fresh root that holds only what Python needs (no project, homes, /opt, /etc...)",
        (
            Edit(
                "grader/jail/root_plan.py",  # binds the old root's every folder back, read-only
                "binds.update([LOADER_CACHE, *DEVICES])",
                'binds.update(["/" + e for e in os.listdir("/") if e not in ("dev", "proc", "tmp")]\n'
                "                  + [LOADER_CACHE, *DEVICES])",
            ),
        ),
    ),
    Ablation(
        "read_only_mounts",
        "every bind of the jail's root read-only, the scratch folder the only writable place",
        (
            Edit(
                "grader/jail/filesystem.py",
                "flags = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID\n",
                "flags = MS_REMOUNT | MS_BIND | MS_NOSUID\n",
            ),
        ),
    ),
    Ablation(
        "privilege_drop",
        "an unprivileged uid (or no capabilities), with no_new_privs",
        (Edit("grader/jail/zygote.py", '    isolation.drop_privileges(spec.get("uid"), spec.get("gid"))\n', ""),),
    ),
    Ablation(
        "memory_rlimit",
        "one process's address space (RLIMIT_AS)",
        (
            Edit(
                "grader/jail/isolation.py",
                "        (resource.RLIMIT_AS, mapped_bytes() + limits.memory_mb * mb),\n",
                "",
            ),
        ),
    ),
    Ablation(
        "memory_cgroup",
        "the notebook's memory, all its processes together (memory cgroup)",
        (
            Edit(
                "grader/jail/isolation.py",
                '        ("memory", {"memory.limit_in_bytes": memory_bytes, "memory.swappiness": 0}),\n',
                "",
            ),
        ),
    ),
    Ablation(
        "process_limit",
        "the number of processes (RLIMIT_NPROC and the pids cgroup: two layers)",
        (
            Edit("grader/jail/isolation.py", "        (resource.RLIMIT_NPROC, tasks_of(uid) + limits.nproc),\n", ""),
            Edit("grader/jail/isolation.py", '        ("pids", {"pids.max": pids}),\n', ""),
        ),
        layers=("RLIMIT_NPROC", "pids cgroup"),
    ),
    Ablation(
        "call_timeout",
        "a CPU-time limit, a limit on waiting without computing and a wall-clock backstop on "
        "each call of a student function",
        (
            Edit(
                "grader/sandbox/client.py",
                "self._remaining(self.limits.call_timeout_s)",
                'self._remaining(float("inf"))',
            ),
            Edit(
                "grader/sandbox/client.py",
                "deadline, clock, watch, idle=self.limits.call_idle_s, spent=lambda: allowance.spent_s",
                'deadline, CallClock(float("inf"), 0.0), watch',
            ),
        ),
        layers=("CPU budget", "idle limit", "wall-clock backstop"),
    ),
    Ablation(
        "cell_timeout",
        "a CPU-time limit and a limit on waiting without computing on each notebook cell",
        (
            Edit(
                "grader/sandbox/process.py",
                "self._wait_readable(deadline, clock, idle=self.limits.cell_timeout_s)",
                'self._wait_readable(deadline, CallClock(float("inf"), 0.0))',
            ),
        ),
    ),
    Ablation(
        "no_pickle",
        "nothing from the sandbox is unpickled (the codec has no way to carry an object array)",
        (
            Edit(
                "grader/jail/codec.py",
                "            if arr.dtype.str not in _ALLOWED_DTYPES or arr.nbytes > MAX_ARRAY_BYTES:\n",
                "            if arr.dtype == object:\n"
                '                return {"t": "pickle", "v": __import__("pickle").dumps(arr).hex()}\n'
                "            if arr.dtype.str not in _ALLOWED_DTYPES or arr.nbytes > MAX_ARRAY_BYTES:\n",
            ),
            Edit(
                "grader/jail/codec.py",
                '    if t == "unsupported":\n',
                '    if t == "pickle":\n        return __import__("pickle").loads(bytes.fromhex(node["v"]))\n'
                '    if t == "unsupported":\n',
            ),
        ),
    ),
    Ablation(
        "clean_environment",
        "the sandbox starts from a clean environment (no TA tokens)",
        (
            Edit(
                "grader/sandbox/launch.py",
                'env = {k: os.environ[k] for k in ("PATH", "LANG", "LC_ALL") if k in os.environ}',
                "env = dict(os.environ)",
            ),
        ),
    ),
    Ablation(
        "shed_threads",
        "the worker re-forks to shed threads a cell left running",
        (Edit("grader/jail/child.py", "    if threading.active_count() > 1:\n", "    if False:\n"),),
        slow=True,
    ),
    Ablation(
        "forks_stay_silent",
        "processes the student forked never speak on the grader's socket",
        (
            Edit(
                "grader/jail/child.py",
                "    if os.getpid() != pid:\n        os._exit(0)\n",
                "    if False:\n        os._exit(0)\n",
            ),
        ),
    ),
)


def by_name() -> dict[str, Ablation]:
    return {a.name: a for a in ABLATIONS}
