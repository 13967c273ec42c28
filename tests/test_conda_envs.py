"""Every rule's ``conda:`` environment file exists, its path taken relative to the rule
file as Snakemake takes it (a rule file moved one folder deeper must say so)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONDA = re.compile(r"^\s*conda:\s*\n\s*\"([^\"]+)\"", re.MULTILINE)


def test_every_conda_env_path_resolves_from_its_rule_file():
    rule_files = sorted((ROOT / "workflow").rglob("*.smk"))
    checked = []
    for rule_file in rule_files:
        for path in CONDA.findall(rule_file.read_text(encoding="utf-8")):
            env = (rule_file.parent / path).resolve()
            assert env.is_file(), f"{rule_file.relative_to(ROOT)}: conda env {path} is missing"
            checked.append(env.name)
    assert len(checked) > 20 and {"core.yaml", "report.yaml"} <= set(checked)
