"""A study's configuration, resolved once: what every section planner reads.

The Snakefile validates the config against ``workflow/schemas/config.schema.yaml``
(shapes only) and builds one :class:`Study`: it fills in the defaults
(:mod:`tokstudy.workflow.study.defaults`) and answers the settings every section shares (results
folder, seed, languages, tokenizers) and path patterns (:meth:`Study.out`). The section
planners read it; :class:`tokstudy.workflow.plan.StudyPlan` builds them (and so checks
each section against the rest of the study). Keeping this logic here (not in the ``.smk``
files) makes it testable without Snakemake.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tokstudy.workflow.results_dir import check_results_dir
from tokstudy.workflow.study.defaults import with_defaults
from tokstudy.workflow.study.paths import fill


class Study:
    """A validated config dictionary, resolved: defaults filled in, the results folder
    checked; the section planners (:class:`~tokstudy.workflow.plan.StudyPlan`) read it."""

    def __init__(self, config: dict[str, Any], base: Path = Path(".")) -> None:
        self.config = with_defaults(config)
        # ``~`` is the user's home, as in a shell (pandas would expand it, Snakemake not)
        self.config["results_dir"] = os.path.expanduser(self.config["results_dir"])
        self.base = Path(base)
        check_results_dir(self.results_dir, self.base)

    @property
    def results_dir(self) -> str:
        """The folder of every output of the study."""
        return self.config["results_dir"]

    def out(self, pattern: str, **values: Any) -> str:
        """A planner's path pattern under the results folder, with ``values`` filled in."""
        return f"{self.results_dir}/{fill(pattern, **values)}"

    @property
    def seed(self) -> int:
        """The seed of every random choice of the study."""
        return int(self.config["seed"])

    @property
    def languages(self) -> list[str]:
        """Language codes, sorted."""
        return sorted(self.config["languages"])

    @property
    def languages_as_listed(self) -> list[str]:
        """Language codes in the order the config lists them (the study page opens on the
        first: the one a study puts first is the one it is about)."""
        return list(self.config["languages"])

    @property
    def tokenizers(self) -> list[str]:
        """Tokenizer names, sorted."""
        return sorted(self.config["tokenizers"])
