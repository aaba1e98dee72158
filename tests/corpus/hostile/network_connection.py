"""causal_mask phones home to a server on the grading machine."""

HONEST = None  # a wrong-corpus entry holding this submission's honest work, if any
ATTACK = {  # cells replaced by hostile code (their honest content: nothing)
    'causal_mask': "def causal_mask(T):\n    import socket\n    s = socket.create_connection(('127.0.0.1', {port}), timeout=1)\n    s.sendall(b'pwned')\n    return torch.triu(torch.full((T, T), float('-inf')), diagonal=1)",
}
ATTACK_CELLS = [  # hostile cells inserted after the imports
    "import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=1).sendall(b'hello')\nexcept OSError:\n    pass",
]
TOUCHES = ()  # exercises the attack itself may break (self-inflicted)
