"""Changes directory, environment and sys.path for whatever runs later."""

HONEST = None  # a wrong-corpus entry holding this submission's honest work, if any
ATTACK = {  # cells replaced by hostile code (their honest content: nothing)
}
ATTACK_CELLS = [  # hostile cells inserted after the imports
    "import os, sys\nos.chdir('/')\nos.environ.clear()\nos.environ['HOME'] = '/nonexistent'\nsys.path.insert(0, '/nonexistent')\nsys.modules['hypothesis'] = None",
]
TOUCHES = ()  # exercises the attack itself may break (self-inflicted)
