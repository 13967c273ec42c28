"""The workflow runs in one environment, the package's (docs/architecture.md, "Environments
and layout"): no rule declares a conda environment and there is no ``envs/`` folder, so
nothing claims an isolation that ``--use-conda`` would not give (issue 55: the three files
there each installed the whole package)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONDA = re.compile(r"^\s*conda:", re.MULTILINE)


def test_no_rule_declares_a_conda_environment() -> None:
    rule_files = sorted((ROOT / "workflow").rglob("*.smk"))
    assert len(rule_files) > 10
    declaring = [
        str(path.relative_to(ROOT))
        for path in [ROOT / "Snakefile", *rule_files]
        if CONDA.search(path.read_text(encoding="utf-8"))
    ]
    assert declaring == []
    assert not (ROOT / "envs").exists()
