"""Fused attention: our kernel against every SDPA back end this machine has, measured in the same run.

Timing study (the default). For each case (head dim d, length N, causal or not):
1. correctness first, on fresh inputs of the case's shape: the first (batch, head) slice of the output, the
   LSE and the three gradients is compared with float64 attention. Ours must meet FlashAttention's rule (max
   error at most 2x that of naive attention in the same precision); a case where it does not is marked FAIL,
   is not timed, and makes the exit status 1. The back ends' worst error/naive ratio is printed beside it.
2. timing: on CUDA, ``triton.testing.do_bench`` medians (it warms up, flushes the L2 cache between calls
   and repeats for ``--rep-ms``); on CPU, the median of repeated calls after a warm-up call. Forward alone,
   and backward alone (``autograd.grad`` of a kept forward graph).
3. TFLOP/s, counting 4 B H N^2 d for the forward (halved when causal) and 2.5x that for the backward, and
   the ratio ours / back end of the TFLOP/s (above 1: ours is faster).
Back ends: ``torch.nn.attention.sdpa_kernel`` with FLASH_ATTENTION, CUDNN_ATTENTION, EFFICIENT_ATTENTION (and
MATH on CPU); one that fails on a case is skipped with its reason printed. Ours is the Triton kernel on CUDA
and the tiled torch path on CPU. Shapes fill the machine: B*N = --tokens, H = --hidden / d.

    .venv/bin/python benchmarks/attention.py --device cpu --plot attention-cpu.png   # < 1 min, fp32
    .venv/bin/python benchmarks/attention.py --device cuda --plot attention-gpu.png  # fp16, 16K tokens

Memory study (``--memory``, CPU): naive vs SDPA vs tiled, time and peak memory, one fresh process per case
(the table and docs/attention-benchmark.png of docs/performance.md).

The studies live beside this script: attention_correctness.py (the contestants and their check),
attention_timing.py and attention_memory.py.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from attention_memory import memory_one, memory_study  # noqa: E402
from attention_timing import timing_study  # noqa: E402


def _parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    p.add_argument("--dtype", default=None, help="float16 (CUDA default), bfloat16 or float32 (CPU default)")
    p.add_argument("--tokens", type=int, default=None, help="B*N (CUDA: 16384, CPU: 1024)")
    p.add_argument("--hidden", type=int, default=None, help="H*d (CUDA: 2048, CPU: 256)")
    p.add_argument("--d", type=int, nargs="+", default=None, help="head dims (CUDA: 64 128, CPU: 64)")
    p.add_argument("--N", type=int, nargs="+", default=None, help="lengths (CUDA: 512 ... 16384, CPU: 128 256 512)")
    p.add_argument("--causal", nargs="+", choices=("no", "yes"), default=["no", "yes"])
    p.add_argument("--rep-ms", type=int, default=200, help="do_bench's repetition time per measurement (CUDA)")
    p.add_argument("--plot", default=None, help="write a plot (PNG) here")
    p.add_argument("--memory", action="store_true", help="the memory study (CPU) instead of the timing study")
    p.add_argument("--B", type=int, default=2, help="--memory: batch")
    p.add_argument("--H", type=int, default=4, help="--memory: heads")
    p.add_argument("--mem-d", type=int, default=64, help="--memory: head dim")
    p.add_argument("--memory-one", nargs=2, metavar=("METHOD", "N"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    args.causal = [c == "yes" for c in args.causal]
    cuda = args.device == "cuda"
    if args.memory or args.memory_one:
        args.N = args.N or [1024, 2048, 4096, 8192, 16384]
        args.causal = args.causal if len(args.causal) == 1 else [False]
    else:
        args.tokens = args.tokens or (16384 if cuda else 1024)
        args.hidden = args.hidden or (2048 if cuda else 256)
        args.d = args.d or ([64, 128] if cuda else [64])
        args.N = args.N or ([512, 1024, 2048, 4096, 8192, 16384] if cuda else [128, 256, 512])
    return args


def main(argv=None) -> int:
    args = _parse(argv)
    if args.memory_one:
        print(json.dumps(memory_one(args.memory_one[0], int(args.memory_one[1]), args)))
        return 0
    if args.memory:
        return memory_study(args)
    if args.device == "cuda":
        import torch

        if not torch.cuda.is_available():
            print("no CUDA device here; run with --device cpu", file=sys.stderr)
            return 2
    return timing_study(args)


if __name__ == "__main__":
    sys.exit(main())
