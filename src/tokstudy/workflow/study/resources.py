"""What each rule asks of a machine: the one table of rule defaults, and how a study's
``resources:`` section overrides them.

Three layers, later ones winning: the defaults below (sized for what the jobs need), the
study's ``resources.default`` and ``resources.<key>`` entries (``key`` is the rule's
``resources`` entry: its own name, or the entry it shares, such as ``train_tokenizer``
for every tokenizer-training rule), then a Snakemake profile's ``set-threads`` /
``set-resources`` (``profiles/``), which Snakemake applies on top by itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RuleResources:
    """Defaults of one rule: threads, memory (MB), run time (minutes), and the entry of
    the study's ``resources:`` section that overrides them."""

    key: str
    mem_mb: int
    runtime: int
    threads: int = 1


def _rules(key: str, mem_mb: int, runtime: int, threads: int, *names: str) -> dict:
    return {name: RuleResources(key, mem_mb, runtime, threads) for name in names}


#: every rule that runs a job (the ``*_outputs`` and ``all`` rules run nothing)
RULES: dict[str, RuleResources] = {
    **_rules("prepare_corpus", 1000, 30, 1, "download_corpus", "prepare_corpus"),
    **_rules(
        "train_tokenizer",
        4000,
        60,
        1,
        "train_tokenizer",
        "train_tokenizer_sizes",
        "train_multilingual_tokenizer",
        "nmt_train_tokenizer",
    ),
    **_rules("compute_metrics", 4000, 60, 1, "compute_metrics", "nmt_tokenizer_metrics"),
    **_rules("import_pretrained", 2000, 30, 1, "download_pretrained"),
    **_rules("import_pretrained", 4000, 30, 1, "import_pretrained"),
    **_rules("silver_treebank", 2000, 30, 1, "silver_treebank"),
    **_rules("pretokenize_mlm", 4000, 60, 1, "pretokenize_mlm"),
    **_rules("pretokenize_shard", 4000, 60, 1, "pretokenize_shard"),
    **_rules("merge_pretokenized", 2000, 30, 1, "merge_pretokenized"),
    **_rules("prepare_characterbert", 4000, 60, 1, "prepare_characterbert"),
    **_rules("pretrain_mlm", 8000, 240, 2, "pretrain_mlm"),
    **_rules("evaluate_mlm", 4000, 60, 1, "evaluate_mlm"),
    **_rules("finetune_model", 4000, 120, 1, "finetune_model"),
    **_rules("train_clm", 8000, 240, 2, "train_clm"),
    **_rules("evaluate_clm", 4000, 60, 1, "evaluate_clm"),
    **_rules("nmt_cldr_corpus", 1000, 10, 1, "nmt_cldr_corpus"),
    **_rules("nmt_split", 4000, 30, 1, "nmt_split"),
    **_rules("nmt_joint_text", 2000, 10, 1, "nmt_joint_text"),
    **_rules("nmt_train", 8000, 720, 2, "nmt_train"),
    **_rules("nmt_translate", 4000, 120, 2, "nmt_translate"),
    **_rules("nmt_score", 2000, 10, 1, "nmt_score"),
    **_rules("nmt_report", 4000, 30, 1, "nmt_report"),
    **_rules(
        "default",
        2000,
        10,
        1,
        "segmentation_table",
        "plot_parity_pud",
        "plot_multilingual",
        "collect_metrics",
        "metric_tables",
        "plot_metrics",
        "plot_frequencies",
        "cost_table",
        "summarize_models",
    ),
    **_rules("default", 2000, 30, 1, "tokenization_parity"),
    **_rules("default", 4000, 30, 1, "study_page"),
    **_rules("default", 4000, 30, 1, "multilingual_corpus", "multilingual_tables", "correlation"),
    **_rules("default", 4000, 60, 1, "morphological_alignment", "tokenization_parity_pud"),
    **_rules("default", 4000, 30, 2, "tokenization_parity_udhr"),
    **_rules(
        "default",
        2000,
        10,
        1,
        "plot_parity_udhr",
        "plot_morphscore_heatmap",
        "plot_number_tokens",
        "plot_robustness_heatmap",
    ),
    **_rules("default", 4000, 60, 1, "morphscore", "number_tokens", "robustness"),
}


#: the defaults of a rule with no row above (a new analysis's light jobs): the ``default``
#: entry's sizes, overridden by the study's ``resources.default``
UNLISTED = RuleResources("default", 2000, 10, 1)


def rule_resources(rule: str, study_resources: dict[str, Any]) -> dict[str, Any]:
    """Threads, mem_mb, runtime (and any cluster key) of ``rule``: its defaults (its row
    of :data:`RULES`, else :data:`UNLISTED`), then the study's ``resources.default``, then
    its own ``resources`` entry."""
    defaults = RULES.get(rule, UNLISTED)
    return {
        "threads": defaults.threads,
        "mem_mb": defaults.mem_mb,
        "runtime": defaults.runtime,
        **study_resources.get("default", {}),
        **study_resources.get(defaults.key, {}),
    }
