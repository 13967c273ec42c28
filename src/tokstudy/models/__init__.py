"""Model stage: BERT masked-LM pretraining per tokenizer, and its evaluation.

Modules: :mod:`~tokstudy.models.config` (the ``models:`` config section),
:mod:`~tokstudy.models.data` (pre-tokenized corpora on disk), :mod:`~tokstudy.models.pretrain`
(the MLM step loop on :mod:`tokstudy.training.core`), :mod:`~tokstudy.models.charbert`
(CharacterBERT), :mod:`~tokstudy.models.family` (BERT and CharacterBERT behind one
protocol), :mod:`~tokstudy.models.mlm_scoring` (pseudo-perplexity, bits per character),
:mod:`~tokstudy.models.noise` (misspelling noise), :mod:`~tokstudy.models.ud_sentences`,
:mod:`~tokstudy.models.tsv_datasets` (user TSV datasets), :mod:`~tokstudy.models.finetune`
(fine-tuning), :mod:`~tokstudy.models.tasks` (MLM evaluation and the downstream tasks) and
:mod:`~tokstudy.models.study_tables` (tables over runs); the stage's planner (the
``models:`` section) is :mod:`~tokstudy.workflow.models.plan` (one planner per kind of
task), and the rules of ``workflow/rules/models.smk`` name these modules' functions.
Statistics over runs are in :mod:`tokstudy.statistics`; classification scores in
:mod:`tokstudy.models.classification_scores`.
"""
