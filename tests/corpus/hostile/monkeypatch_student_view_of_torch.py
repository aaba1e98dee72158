"""Replaces torch.softmax and torch.triu inside the student's process."""

HONEST = None  # a wrong-corpus entry holding this submission's honest work, if any
ATTACK = {  # cells replaced by hostile code (their honest content: nothing)
}
ATTACK_CELLS = [  # hostile cells inserted after the imports
    'torch.softmax = lambda x, dim=None: x\ntorch.triu = lambda x, diagonal=0: torch.zeros_like(x)',
]
TOUCHES = ('causal_mask', 'masked_self_attention')  # exercises the attack itself may break (self-inflicted)
