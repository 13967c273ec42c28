"""BBPE: byte-level subwords with leading/trailing byte tokens (Wei et al., 2021).

``units``: byte units of a text; ``learner``: vocabulary learning; ``model``: the trained
model's encoding and decoding; ``transformers_tokenizer``: its ``transformers`` tokenizer.
The ``bbpe`` adapter is :mod:`tokstudy.tokenizers.adapters.bbpe`.
"""
