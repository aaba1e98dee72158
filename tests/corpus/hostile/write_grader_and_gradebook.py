"""Tries to overwrite the grader, the reference, the outputs and the gradebook, and to leave a file in /var/tmp."""

HONEST = None  # a wrong-corpus entry holding this submission's honest work, if any
ATTACK = {  # cells replaced by hostile code (their honest content: nothing)
}
ATTACK_CELLS = [  # hostile cells inserted after the imports
    "import os\nfor path in ['{project}/grader/registry.py', '{project}/reference/answers.py', '{out}/grades.csv', '{out}/gradebook.db', '{out}/results/hostile-write_grader_and_gradebook.json', '/etc/profile', '/var/tmp/seqgrade-pwned']:\n    try:\n        with open(path, 'w') as f:\n            f.write('pwned')\n    except OSError:\n        pass\n    try:\n        os.remove(path)\n    except OSError:\n        pass",
]
TOUCHES = ()  # exercises the attack itself may break (self-inflicted)
