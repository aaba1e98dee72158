"""Answer keys for the conceptual questions of the sequence_models assignment. Never shipped to students."""

from __future__ import annotations

from .attention import qkv_param_count

# The notebook shows three (T, T) matrices: A has -inf below the diagonal, B above it, C off it.
# Only B lets query i see keys j <= i.
CAUSAL_MASK_CHOICE = "B"

# Without a mask every position attends to every other one, including later ones.
SELF_ATTENTION_IS_CAUSAL = False

# W_q, W_k, W_v for d_model = 10 at sequence length T = 4.
QKV_PARAM_COUNT = qkv_param_count(d_model=10, seq_len=4)
