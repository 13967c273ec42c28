"""The planner of the ``tokenizers:`` and ``pretrained:`` sections: the tokenizers the
study trains or imports, their checks, paths and targets."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from tokstudy.errors import TokstudyError
from tokstudy.study.checks import check_listed
from tokstudy.study.paths import CELL
from tokstudy.tokenizers.registry import adapter_class

if TYPE_CHECKING:
    from tokstudy.study.core import Study

_WILDCARD_NAME = r"[a-z][a-z0-9_]*"


class TokenizersPlanner:
    """``tokenizers`` and ``pretrained``: the tokenizers trained or imported."""

    #: the folder of a tokenizer trained on one language
    TOKENIZER = f"tokenizers/{CELL}"
    #: the folder a pretrained tokenizer is imported into
    PRETRAINED = "pretrained/{name}"
    #: where a ``hub:`` tokenizer is downloaded to (never without ``hub:``)
    PRETRAINED_DOWNLOAD = "downloads/pretrained/{name}/tokenizer.json"

    def __init__(self, study: Study) -> None:
        self.study = study
        for name in study.config["tokenizers"]:
            adapter_class(name)
            check_listed(
                study.tokenizer_languages(name),
                study.config["languages"],
                f"config key tokenizers.{name}.languages: {{name!r}} is not under languages "
                "(known: {known})",
            )
        self._check_pretrained()

    def _check_pretrained(self) -> None:
        study = self.study
        for name in study.pretrained_names():
            key = f"config key pretrained.{name}"
            entry = study.pretrained[name]
            if name in study.config["tokenizers"]:
                raise TokstudyError(f"{key}: the name is also a trained tokenizer; rename one")
            if not re.fullmatch(_WILDCARD_NAME, name):
                raise TokstudyError(
                    f"{key}: a name is lower-case letters, digits and _, starting with a letter"
                )
            check_listed(
                entry.get("languages") or [],
                study.config["languages"],
                f"{key}.languages: {{name!r}} is not in languages",
            )
            if "path" not in entry and "hub" not in entry:
                raise TokstudyError(f"{key}: give path (a local file or folder) or hub")
            if "path" not in entry and not entry.get("sha256"):
                raise TokstudyError(f"{key}: a hub download needs sha256")
            if "path" in entry and not study.pretrained_source(name).exists():
                raise TokstudyError(f"{key}.path: no such file or folder {entry['path']}")

    def targets(self) -> list[str]:
        """The directory of every scored tokenizer (trained per language, or pretrained)."""
        return sorted({self.study.tokenizer_dir(job) for job in self.study.scored_jobs()})
