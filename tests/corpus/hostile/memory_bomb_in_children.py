"""Forks six children that each take 900 MB: within one process's limit, far beyond the notebook's.

Where the notebook's memory limit bites, the kernel ends its largest process: always a child, never the
cell's own process, so the cell's outcome is the same from run to run."""

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
    "            time.sleep(1)\n"
    "        finally:\n"
    "            os._exit(0)\n"
    "    kids.append(pid)\n"
    "for pid in kids:\n"
    "    os.waitpid(pid, 0)",
]
TOUCHES = ()  # exercises the attack itself may break (self-inflicted)
