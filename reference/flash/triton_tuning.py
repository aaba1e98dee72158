"""Block sizes, warps and pipeline stages of the fused attention kernels, per GPU architecture.

Each kernel is wrapped in ``triton.autotune`` once per family of configurations, at its first call (never at
import: reading the GPU's architecture needs a driver). The tuning key is the sequence length rounded up to
a power of two, the head dim, causality and the dtypes, so one length bucket is tuned once.

Families:
* ``sm90``: Hopper (and Blackwell sm100, which has at least as much shared memory): 228 KB of shared memory
  per SM lets 128 x 128 tiles run with 3 stages.
* ``sm80``: Ampere and everything else (Ada and consumer Blackwell have about 100 KB; a config that does not
  fit raises OutOfResources, which the autotuner skips).
* ``fp32``: IEEE fp32 runs on the CUDA cores, not the tensor cores: smaller tiles, fewer stages.
* ``interpreter``: Triton's interpreter on a CPU: one config (nothing to time), blocks of unequal sizes so the
  tests walk the split loops with several key blocks on the diagonal.
"""

from __future__ import annotations

import torch
import triton

# CONFIGS[family][kernel][head-dim class] = [(BLOCK_M, BLOCK_N, num_warps, num_stages), ...]; the head-dim class
# is 64 (BLOCK_D <= 64) or 128. The first entry of each list is the one used untuned (short sequences); in the
# sm80 lists it fits in 100 KB of shared memory. "fwd" and "dq": a program owns BLOCK_M queries and streams BLOCK_N keys
# (BLOCK_M % BLOCK_N == 0, so the diagonal is whole key blocks); "dkdv": a program owns BLOCK_N keys and streams
# BLOCK_M queries (BLOCK_N % BLOCK_M == 0). The lists leave out what spilled registers when compiled without a
# GPU (Triton 3.9's ptxas for sm_90a and sm_80, fp16, causal or not; fp32 for sm_90a): a 128 x 128 fp32
# accumulator (fwd: BLOCK_M = 128 at d = 128; dK/dV: BLOCK_N = 128, two accumulators) needs 8 warps, and 4-warp
# dK/dV with 32 x 128 blocks spills over a kilobyte at d = 128. Spills under 64 bytes were kept.
CONFIGS = {
    "sm90": {
        "fwd": {
            64: [
                (128, 64, 4, 3),
                (128, 128, 8, 3),
                (128, 64, 8, 3),
                (128, 64, 4, 4),
                (128, 128, 8, 2),
                (64, 64, 4, 3),
                (128, 32, 4, 4),
            ],
            128: [
                (128, 64, 8, 3),
                (128, 128, 8, 3),
                (128, 128, 8, 2),
                (128, 64, 8, 4),
                (64, 64, 4, 3),
                (128, 32, 4, 4),
            ],
        },
        "dkdv": {
            64: [(32, 128, 8, 3), (32, 128, 4, 3), (64, 128, 8, 3), (64, 128, 8, 2), (32, 64, 4, 4), (64, 64, 4, 3)],
            128: [(32, 128, 8, 3), (32, 128, 8, 4), (32, 64, 4, 4), (32, 64, 4, 3), (64, 64, 8, 3), (16, 64, 4, 4)],
        },
        "dq": {
            64: [(128, 32, 4, 3), (128, 64, 8, 3), (128, 32, 8, 3), (128, 32, 4, 5), (64, 64, 4, 3), (64, 32, 4, 4)],
            128: [(128, 32, 8, 3), (128, 64, 8, 3), (128, 32, 8, 4), (128, 64, 8, 2), (64, 64, 4, 3), (64, 32, 4, 4)],
        },
    },
    "sm80": {
        "fwd": {
            64: [(128, 64, 4, 3), (128, 64, 8, 3), (128, 32, 4, 3), (64, 64, 4, 3), (128, 128, 8, 2), (64, 32, 4, 4)],
            128: [(64, 64, 4, 3), (128, 64, 8, 3), (128, 64, 8, 2), (128, 32, 8, 3), (64, 32, 4, 4), (64, 64, 4, 2)],
        },
        "dkdv": {
            64: [(32, 128, 8, 3), (32, 128, 4, 2), (64, 128, 8, 2), (32, 64, 4, 3), (32, 64, 4, 4)],
            128: [(32, 64, 4, 3), (32, 128, 8, 3), (32, 128, 8, 2), (32, 64, 8, 3), (64, 64, 8, 3), (16, 64, 4, 3)],
        },
        "dq": {
            64: [(128, 32, 4, 3), (128, 64, 8, 2), (64, 64, 4, 3), (64, 32, 4, 3), (128, 32, 8, 2)],
            128: [(64, 32, 4, 3), (64, 64, 4, 3), (128, 32, 8, 2), (128, 32, 8, 3), (64, 64, 4, 2)],
        },
    },
    "fp32": {  # IEEE dots on the CUDA cores: whole tiles live in registers, so small tiles
        "fwd": {
            64: [(32, 32, 4, 2), (32, 16, 4, 2), (32, 32, 8, 2), (16, 16, 4, 2)],
            128: [(32, 16, 4, 2), (32, 16, 8, 2), (16, 16, 4, 2)],
        },
        "dkdv": {64: [(16, 32, 4, 2), (16, 64, 8, 2), (16, 16, 4, 2)], 128: [(16, 32, 8, 2), (16, 16, 4, 2)]},
        "dq": {
            64: [(32, 32, 4, 2), (64, 16, 4, 2), (32, 16, 4, 2), (32, 32, 8, 2)],
            128: [(32, 16, 4, 2), (32, 16, 8, 2), (16, 16, 4, 2)],
        },
    },
    # One config for every head dim: the autotuner runs it without pruning or timing anything.
    "interpreter": {"fwd": {None: [(32, 16, 4, 1)]}, "dkdv": {None: [(16, 32, 4, 1)]}, "dq": {None: [(32, 16, 4, 1)]}},
}
SHORT = 256  # sequences up to this length use a family's first config: launch-bound, tuning would cost more


def family(q: torch.Tensor, interpreted: bool) -> str:
    """The family of configurations for these inputs (reads the GPU's compute capability, never at import)."""
    if interpreted or not q.is_cuda:
        return "interpreter"
    if q.dtype == torch.float32:
        return "fp32"
    major, _ = torch.cuda.get_device_capability(q.device)
    return "sm90" if major in (9, 10) else "sm80"


def tune_n(n_q: int, n_k: int) -> int:
    """The autotuning key's length: the longer side rounded up to a power of two (at least 16)."""
    return max(16, triton.next_power_of_2(max(n_q, n_k)))


def head_dim_class(block_d: int) -> int:
    return 64 if block_d <= 64 else 128


def _prune(configs, named_args, **kwargs):
    """The configs of this head-dim class (each carries its class); only the first for short sequences."""
    block_d = kwargs.get("BLOCK_D", named_args.get("BLOCK_D"))
    mine = [c for c in configs if block_d is None or c.head_dim_class == head_dim_class(block_d)]
    return mine[:1] if named_args["TUNE_N"] <= SHORT else mine


_TUNERS: dict = {}  # (kernel name, family) -> its autotuner, made at the kernel's first call in that family


def _config(m, n, warps, stages, cls):
    config = triton.Config({"BLOCK_M": m, "BLOCK_N": n}, num_warps=warps, num_stages=stages)
    config.head_dim_class = cls  # read by _prune
    return config


def _tuned(kernel, stage: str, fam: str):
    if (kernel.__name__, fam) not in _TUNERS:
        configs = [_config(*c, cls) for cls, entries in CONFIGS[fam][stage].items() for c in entries]
        _TUNERS[kernel.__name__, fam] = triton.autotune(
            configs, key=["TUNE_N", "HEAD_DIM", "CAUSAL"], prune_configs_by={"early_config_prune": _prune}
        )(kernel)
    return _TUNERS[kernel.__name__, fam]


def launcher(kernel, stage: str, q: torch.Tensor, blocks: tuple[int, ...] | None = None):
    """``kernel`` ready to be indexed with a grid: autotuned for ``q``'s family, or with ``blocks`` forced:
    (BLOCK_M, BLOCK_N[, num_warps, num_stages]), 4 warps and 2 stages unless given (tests walk every GPU block
    shape in the interpreter this way)."""
    if blocks is not None:
        return _Forced(kernel, blocks)
    interpreted = not isinstance(kernel, triton.runtime.JITFunction)  # TRITON_INTERPRET=1 at decoration
    return _tuned(kernel, stage, family(q, interpreted))


class _Forced:
    def __init__(self, kernel, blocks):
        self.kernel, self.meta = kernel, {"BLOCK_M": blocks[0], "BLOCK_N": blocks[1]}
        self.launch = {
            "num_warps": blocks[2] if len(blocks) > 2 else 4,
            "num_stages": blocks[3] if len(blocks) > 3 else 2,
        }

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.kernel[lambda meta: grid({**meta, **self.meta})](
            *args, **kwargs, **self.meta, **self.launch
        )


def chosen_configs() -> list[str]:
    """One line per tuned (kernel, family, key): what the autotuner picked, for benchmark reports."""
    lines = []
    for (name, fam), tuner in sorted(_TUNERS.items()):
        for key, c in tuner.cache.items():
            lines.append(
                f"{name} [{fam}] TUNE_N={key[0]} d={key[1]} causal={key[2]} {', '.join(key[3:])}: "
                f"BLOCK_M={c.kwargs['BLOCK_M']} BLOCK_N={c.kwargs['BLOCK_N']} "
                f"warps={c.num_warps} stages={c.num_stages}"
            )
    return lines
