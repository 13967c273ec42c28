"""Machine translation as a downstream test of tokenizers (the HFT paper's Table 1, redone).

Transformer encoder–decoders trained from scratch per direction, tokenizer, size and seed;
translations are detokenized with the target tokenizer and scored with sacreBLEU (BLEU,
chrF) against the untouched references. :mod:`~tokstudy.nmt.data` splits the corpus,
:mod:`~tokstudy.nmt.runs` trains and translates one run, :mod:`~tokstudy.nmt.scoring`
scores it, :mod:`~tokstudy.nmt.report` writes Table 1; settings in
:mod:`tokstudy.nmt.config`. The stage's planner (the ``nmt:`` section) is
:mod:`tokstudy.workflow.nmt.plan`; the rules of ``workflow/rules/nmt.smk`` name these
modules' functions.
"""
