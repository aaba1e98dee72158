"""What the batch's local workers have in common, imported once: the forkserver the workers are forked
from (grader.batch.pool) imports this module, so no worker imports torch and the grading code again.

Importing this module does the work. It starts no thread and runs no parallel torch operation (a process
forked from one that ran a multi-threaded OpenMP operation can hang on its next one). The forkserver,
when the batch ends, exits without tearing torch's modules down one by one (its workers, forked, end with
os._exit and run no exit handler)."""

import atexit

from grader.collector import end_process, imports_uncollected

with imports_uncollected():
    import torch

    import grader.grading  # noqa: F401  (the checks' machinery; an assignment's checks are preloaded beside it)

torch.set_num_threads(1)  # one worker per core, as grader.batch.worker sets it again
atexit.register(end_process, 0)
