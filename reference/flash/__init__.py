"""Fused (FlashAttention-style) attention: Triton kernels on GPUs, a tiled torch path elsewhere."""

from .dispatch import flash_attention
from .merge import empty_partial, merge_partials, partial_attention

__all__ = ["flash_attention", "merge_partials", "empty_partial", "partial_attention"]
