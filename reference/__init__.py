"""Reference implementations that seqgrade grades student work against.

This package depends on numpy, torch and triton only, and never imports :mod:`grader`.
"""

from .attention import causal_mask, masked_self_attention, mha_param_count, qkv_param_count
from .autoregressive import ar_fit, seq2col
from .flash import flash_attention, merge_partials
from .recurrent import ar_as_recurrent, forward, recurrent_unit

__all__ = [
    "seq2col",
    "ar_fit",
    "recurrent_unit",
    "ar_as_recurrent",
    "forward",
    "causal_mask",
    "masked_self_attention",
    "qkv_param_count",
    "mha_param_count",
    "flash_attention",
    "merge_partials",
]
