"""The default study (``config/config.yaml``) run end to end ends with its study page."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
from conftest import REPO
from workflow_support import snakemake

pytestmark = pytest.mark.slow


def test_the_default_run_ends_with_the_study_page(tmp_path: Path) -> None:
    config = REPO / "config" / "config.yaml"
    result = snakemake(tmp_path, "--cores", "2", config=config)
    assert result.returncode == 0, result.stderr[-3000:]
    page = tmp_path / "results" / "index.html"
    text = page.read_text(encoding="utf-8")
    start = text.index('id="study-data">') + len('id="study-data">')
    data = json.loads(text[start : text.index("</script>", start)])
    assert data["languages"] == ["bn", "de", "en", "fa"]
    assert len(data["cells"]) == 4 * (5 * 2 + 1)  # five sized tokenizers at two sizes, char
    assert all(cell["lines"] is not None for cell in data["cells"])
    assert any(line["dir"] == "rtl" for line in data["samples"]["fa"]["lines"])
    assert len(data["plots"]) > 20 and all((page.parent / p).is_file() for p in data["plots"])
    german = pd.read_csv(tmp_path / "results" / "tables" / "recommendation_de.csv")
    assert {"fertility", "train_seconds", "pos accuracy"} <= set(german.columns)
    log = (tmp_path / "results" / "logs" / "study_page.log").read_text(encoding="utf-8")
    figures = re.search(r"study page .*?: (\{.*\})", log)
    assert figures, log[-2000:]
    print(figures.group(1))  # size and build time, quoted in docs/study-page.md
    again = snakemake(tmp_path, "-n", config=config)
    assert "Nothing to be done" in again.stdout + again.stderr
