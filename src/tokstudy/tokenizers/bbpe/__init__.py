"""BBPE: byte-level subwords with leading/trailing byte tokens (Wei et al., 2021)."""

from tokstudy.tokenizers.bbpe.adapter import BBPE

__all__ = ["BBPE"]
