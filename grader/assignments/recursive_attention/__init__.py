"""The ``recursive_attention`` assignment: partial attention states, their merge, online softmax, tiled
(FlashAttention) attention and its HBM traffic."""

from __future__ import annotations

from grader.checking.exercise import Assignment, Check, Exercise
from reference import recursive as ref

from . import attention_partial_checks as P
from . import blockwise as B
from . import costs
from . import flash_kernel as FK
from . import io_counts as IO
from . import merge_checks as MG
from . import tiled as TL

ASSIGNMENT = Assignment(
    id="recursive_attention",
    notebook="recursive_attention.ipynb",
    modules=("selfcheck",),
    exercises=(
        Exercise(
            "attention_partial",
            "function",
            (
                Check(
                    P.check_attention_partial_shapes,
                    0.5,
                    "s has one number per query, v one row of width dv per query.",
                    judges="format",
                ),
                Check(
                    P.check_attention_partial_values,
                    2.0,
                    "s = torch.logsumexp(scores, -1) and v = torch.softmax(scores, -1) @ V, "
                    "with scores = q @ K.T / sqrt(d).",
                ),
                Check(P.check_attention_partial_empty_keys, 0.5, "With no keys, return s = -inf and v = zeros."),
                Check(P.check_attention_partial_large_scores, 1.0, "Subtract the largest score before exponentiating."),
            ),
            probe=P.PROBE_ATTENTION_PARTIAL,
            reference=ref.attention_partial,
            cost=costs.partial_cost,
        ),
        Exercise(
            "merge",
            "function",
            (
                Check(
                    MG.check_merge_matches_union,
                    2.0,
                    "s = logaddexp(s_a, s_b); v = exp(s_a - s) v_a + exp(s_b - s) v_b.",
                ),
                Check(MG.check_merge_associative, 1.0, judges="own"),
                Check(MG.check_merge_commutative, 0.5, judges="own"),
                Check(MG.check_merge_empty_state_is_identity, 0.5, judges="own"),
                Check(
                    MG.check_merge_stable_for_extreme_scores,
                    1.0,
                    "Work with differences of log-sum-exps, never exp(s) itself.",
                ),
                Check(MG.check_merge_partition_invariance, 1.0, "Each merge must give exactly the state of the union."),
            ),
            probe=MG.PROBE_MERGE,
            reference=ref.merge,
            cost=costs.generic_cost,
        ),
        Exercise("merge_interpretation", "manual", manual_points=2.0),
        Exercise(
            "online_softmax_attention",
            "function",
            (
                Check(
                    B.check_online_softmax_attention_values,
                    2.5,
                    "Keep a running max m, sum l and weighted sum; rescale both "
                    "by exp(m_old - m_new) when m grows; divide at the end.",
                ),
                Check(
                    B.check_online_softmax_attention_large_scores,
                    1.0,
                    "Exponentiate score - running max, never the score.",
                ),
                Check(B.check_online_softmax_attention_memory, 1.5, judges="own"),
            ),
            requires=("attention_partial", "merge"),
            probe=B.PROBE_ONLINE_SOFTMAX_ATTENTION,
            reference=ref.online_softmax_attention,
            cost=costs.online_cost,
        ),
        Exercise(
            "tiled_attention",
            "function",
            (
                Check(
                    TL.check_tiled_attention_values,
                    2.5,
                    "Outer loop over query blocks, inner loop over key blocks, with the "
                    "running max, sum and output of online softmax per query row.",
                ),
                Check(
                    TL.check_tiled_attention_causal_values,
                    2.0,
                    "Mask keys j > i with the tile offsets; skip tiles wholly in the future.",
                ),
                Check(TL.check_tiled_attention_causality, 1.0, judges="own", outputs=(0,)),
                Check(TL.check_tiled_attention_query_permutation_equivariance, 0.5, judges="own"),
                Check(TL.check_tiled_attention_key_value_permutation_invariance, 0.5, judges="own"),
                Check(TL.check_tiled_attention_memory, 1.5, judges="own", outputs=(0,)),
            ),
            requires=("attention_partial", "merge"),
            probe=TL.PROBE_TILED_ATTENTION,
            # Python loops over tiles: our solution's slowest call used 19 ms (benchmarks/call_cpu.py)
            call_cpu_s=0.25,
            reference=ref.tiled_attention,
            cost=costs.tiled_cost,
        ),
        Exercise(
            "attention_io",
            "function",
            (
                Check(IO.check_attention_io_counts, 1.5, "Follow the notebook's accounting term by term."),
                Check(
                    IO.check_attention_io_rejects_small_memory,
                    0.5,
                    "Raise ValueError when M // (4 * d) is 0.",
                    judges="own",
                ),
            ),
            probe=IO.PROBE_ATTENTION_IO,
            reference=ref.attention_io,
            cost=costs.constant_cost,
        ),
        Exercise("TILING_DOES_NOT_HELP", "answer", (Check(IO.check_answer_tiling_does_not_help, 1.0),)),
        # The bonus: the forward kernel in Triton, run in Triton's interpreter in the jail (grader.jail.zygote).
        Exercise(
            "flash_forward",
            "function",
            (
                Check(
                    FK.check_flash_forward_values,
                    1.5,
                    "One program per block of queries: for each block of keys, "
                    "s = tl.dot(q, tl.trans(k)) * scale, then the running max m, sum l and output acc of "
                    "online softmax; "
                    "O = acc / l at the end.",
                    outputs=(0,),
                ),
                Check(
                    FK.check_flash_forward_causal_values,
                    1.0,
                    "With CAUSAL, stop at the diagonal block and set s to -inf "
                    "where the key's index exceeds the query's.",
                    outputs=(0,),
                ),
                # judges lse alone, but declared for both: outputs=(1,) would move a recorded result kept per
                # processor (degenerate-ignores_input_2), which only a run on each kind of machine can record
                Check(FK.check_flash_forward_lse, 1.0, "lse = m + log(l), in natural-log units, one number per query."),
                Check(FK.check_flash_forward_causality, 0.5, judges="own", outputs=(0,)),
                Check(FK.check_flash_forward_query_permutation_equivariance, 0.5, judges="own"),
                Check(FK.check_flash_forward_key_permutation_invariance, 0.5, judges="own"),
            ),
            probe=FK.PROBE_FLASH_FORWARD,
            bonus=True,
            unjudgeable=FK.triton_missing,
            # each call runs the kernel in Triton's interpreter: the slowest honest call used 56 ms in-process
            # (benchmarks/call_cpu.py, the solution and the alternative kernel)
            call_cpu_s=1.0,
            reference=ref.flash_forward,
            cost=costs.partial_cost,
        ),
    ),
)
