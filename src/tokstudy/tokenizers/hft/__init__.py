"""HFT, the High Frequency Tokenizer (Signoroni & Rychlý, LoResMT 2022).

``pretokenize``: text ↔ marked pre-tokens; ``segment``: best segmentation of pre-tokens;
``learn``: vocabulary learning; ``encoder``: cached encoding and decoding; ``adapter``: the
``hft`` :class:`~tokstudy.tokenizers.base.Tokenizer`; ``hf_wrapper``: a ``transformers``
tokenizer; ``pretok_sentencepiece``: SentencePiece on HFT pre-tokens (``pretok_hf_wrapper``: its
``transformers`` tokenizer).
"""
