"""Installs an IPython input transformer meant to rewrite every later cell."""

HONEST = None  # a wrong-corpus entry holding this submission's honest work, if any
ATTACK = {  # cells replaced by hostile code (their honest content: nothing)
}
ATTACK_CELLS = [  # hostile cells inserted after the imports
    "ip = get_ipython()\nip.input_transformers_cleanup.append(lambda lines: ['score = 27\\n'])\nip.input_transformer_manager.cleanup_transforms.append(lambda lines: lines)",
]
TOUCHES = ()  # exercises the attack itself may break (self-inflicted)
