"""Model stage: BERT masked-LM pretraining per tokenizer, and its evaluation.

Modules: :mod:`~tokstudy.models.config` (the ``models:`` config section),
:mod:`~tokstudy.models.data` (pre-tokenized memmap corpora), :mod:`~tokstudy.models.pretrain`
(training loop with checkpoint/resume), :mod:`~tokstudy.models.charbert` (CharacterBERT),
:mod:`~tokstudy.models.scoring` (pseudo-perplexity, bits per character),
:mod:`~tokstudy.models.noise` (misspelling noise), :mod:`~tokstudy.models.ud`,
:mod:`~tokstudy.models.tsv` (user TSV datasets) and :mod:`~tokstudy.models.finetune`
(downstream tasks), :mod:`~tokstudy.models.stats`
(seed/bootstrap/Wilcoxon statistics) and :mod:`~tokstudy.models.entrypoints` (what the
workflow calls).
"""
