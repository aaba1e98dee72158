"""Forks six children that each take 900 MB: within one process's limit, far beyond the notebook's.

The cell waits for children that hold their memory for 30 s, so it always runs into the cell timeout
and the jail is killed: the outcome does not depend on how fast the kernel reclaims or ends processes
when the notebook's memory limit bites. The resource watch in tests/test_corpus.py sees the peak."""

HONEST = None  # a wrong-corpus entry holding this submission's honest work, if any
ATTACK = {  # cells replaced by hostile code (their honest content: nothing)
}
ATTACK_CELLS = [  # hostile cells inserted after the imports
    "import os, time\n"
    "kids = []\n"
    "for _ in range(6):\n"
    "    try:\n"
    "        pid = os.fork()\n"
    "    except OSError:\n"
    "        break\n"
    "    if pid == 0:\n"
    "        try:\n"
    "            hoard = np.ones(900 * 2**20 // 8)\n"
    "            time.sleep(30)\n"
    "        finally:\n"
    "            os._exit(0)\n"
    "    kids.append(pid)\n"
    "for pid in kids:\n"
    "    os.waitpid(pid, 0)",
]
TOUCHES = ()  # exercises the attack itself may break (self-inflicted)
