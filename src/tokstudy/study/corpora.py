"""The planner of the ``languages:`` and ``corpus_defaults:`` sections: the prepared
corpora of the study, their settings, paths and targets."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tokstudy.study.checks import registered_adapter

if TYPE_CHECKING:
    from tokstudy.study.core import Study
    from tokstudy.study.tokenizers import TokenizersPlanner


class CorporaPlanner:
    """``languages`` and ``corpus_defaults``: the prepared corpora of the study."""

    #: a download, named by its checksum (lower case)
    DOWNLOAD = "downloads/{sha256}.raw"
    TRAIN = "corpora/{language}/train.txt"
    HELDOUT = "corpora/{language}/heldout.txt"
    STATS = "corpora/{language}/stats.json"

    def __init__(self, study: Study, tokenizers: TokenizersPlanner) -> None:
        self.study = study
        self.tokenizers = tokenizers
        for language in study.languages:
            study.source_files(language)
            for name in sorted(study.language_entry(language).get("tokenizer_params") or {}):
                registered_adapter(f"config key languages.{language}.tokenizer_params.{name}", name)

    def settings(self, language: str) -> dict[str, Any]:
        """How ``prepare_corpus`` cleans and splits a language's corpus."""
        keys = ("heldout", "max_lines", "on_invalid_utf8", "max_line_bytes")
        return {key: self.study.corpus_setting(language, key) for key in keys} | {
            "checksums": self.study.corpus_checksums(language),
            "seed": self.study.seed,
        }

    def targets(self) -> list[str]:
        """The prepared corpus (train, heldout, stats) of every language a cell scores."""
        languages = sorted({job.language for job in self.tokenizers.scored_jobs()})
        return [
            self.study.out(pattern, language=language)
            for language in languages
            for pattern in (self.TRAIN, self.HELDOUT, self.STATS)
        ]
