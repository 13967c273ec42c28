"""HFT, the High Frequency Tokenizer (Signoroni & Rychlý, LoResMT 2022).

``pretokenize``: text ↔ marked pre-tokens; ``segment``: best segmentation of pre-tokens;
``learn``: vocabulary learning; ``encoder``: cached encoding and decoding;
``transformers_tokenizer``: a ``transformers`` tokenizer; ``pretok_transformers_tokenizer``:
the ``transformers`` tokenizer of SentencePiece on HFT pre-tokens. The adapters are
:mod:`tokstudy.tokenizers.adapters.hft` (``hft``) and
:mod:`tokstudy.tokenizers.adapters.hft_pretok` (``sp_bpe_hftpretok``,
``sp_unigram_hftpretok``).
"""
