"""GPT-2's byte symbols: the printable characters byte-level tokenizers (HF byte-level
BPE, tiktoken files) spell their tokens with, and the readable text of a token's bytes."""

from __future__ import annotations

import functools


@functools.cache
def byte_of_symbol() -> dict[str, int]:
    """GPT-2's symbol → byte table (imported on first use: ``transformers`` is slow to load)."""
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    return {symbol: byte for byte, symbol in bytes_to_unicode().items()}


def readable_bytes(raw: bytes) -> str:
    """The text of a token's bytes (a space as ``▁``), or upper-case hex (``E0A4``) when they
    are not whole UTF-8 characters, as ``bbpe`` writes its byte tokens."""
    try:
        return raw.decode("utf-8").replace(" ", "▁")
    except UnicodeDecodeError:
        return raw.hex().upper()
