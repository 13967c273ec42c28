"""Machine translation as a downstream test of tokenizers (the HFT paper's Table 1, redone).

Transformer encoder–decoders trained from scratch per direction, tokenizer, size and seed;
translations are detokenized with the target tokenizer and scored with sacreBLEU (BLEU,
chrF) against the untouched references. Entry points for the workflow are in
:mod:`tokstudy.nmt.entrypoints`; settings in :mod:`tokstudy.nmt.config`.
"""
