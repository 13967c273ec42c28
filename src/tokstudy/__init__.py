"""tokstudy: a reproducible study of subword tokenizers across languages."""

__version__ = "0.1.0"
