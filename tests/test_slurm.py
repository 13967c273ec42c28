"""The SLURM profile on a real one-node cluster: same metrics as a local run.

Needs Debian's ``slurm-wlm`` and ``munge`` (``.ci/run`` installs them) and root, since the
test starts munged, slurmctld and slurmd itself; it skips, saying why, when they are
missing, unless ``TOKSTUDY_REQUIRE_SLURM=1`` (CI), where it fails instead.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml
from conftest import REPO
from slurm_cluster import Cluster, client, missing_binaries, one_node_cluster
from workflow_support import snakemake

pytestmark = pytest.mark.slow

# a trained cell is one train_tokenizer job (compute_metrics scores pretrained cells only)
CLUSTER_JOBS = {"prepare_corpus", "train_tokenizer"}
JOB_MEM_MB = 1500
# the metrics and one table (a local rule); plots would only add minutes
TARGETS = ["results/tables/metrics.csv", "results/tables/metrics_train.md"]
RUN_TIMEOUT_S = 600


def why_no_cluster() -> str | None:
    """Why this machine cannot start a test cluster, or None when it can."""
    missing = missing_binaries()
    if missing:
        return f"SLURM/munge not installed (missing: {', '.join(missing)}); see docs/clusters.md"
    if os.geteuid() != 0:
        return "starting munged, slurmctld and slurmd needs root"
    return None


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    reason = why_no_cluster()
    if reason is not None:
        if os.environ.get("TOKSTUDY_REQUIRE_SLURM") == "1":
            pytest.fail(f"TOKSTUDY_REQUIRE_SLURM=1 but {reason}")
        pytest.skip(reason)
    # short path: the munge socket's path must fit in a unix socket address
    with (
        tempfile.TemporaryDirectory(prefix="tokstudy-slurm-") as root,
        one_node_cluster(Path(root)) as running,
    ):
        yield running


def tiny_study(workdir: Path) -> Path:
    """One package-corpus language, two tokenizers, one size: three cluster jobs."""
    workdir.mkdir(parents=True, exist_ok=True)
    config = {
        "seed": 3,
        "corpus_defaults": {"heldout": 0.1, "max_lines": 500},
        "languages": {"bn": {"chatterbot": "bengali"}},
        "vocab_sizes": [250],
        "tokenizers": {"sp_bpe": {}, "hf_unigram": {}},
        "metrics": ["mu", "fertility"],
        "plots": {"frequency_vocab_size": 250, "skip_top_ranks": 10},
        # the study's resources reach sbatch (and fit a small CI machine)
        "resources": {rule: {"mem_mb": JOB_MEM_MB} for rule in CLUSTER_JOBS},
    }
    path = workdir / "study.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def run_on_cluster(cluster: Cluster, workdir: Path) -> subprocess.CompletedProcess:
    """The study through ``--profile profiles/slurm``, with the cluster's SLURM_CONF."""
    options = [
        "--profile",
        str(REPO / "profiles" / "slurm"),
        # the test's jobs take seconds: check their state every few seconds, not 40
        "--slurm-init-seconds-before-status-checks",
        "2",
        "--slurm-keep-successful-logs",
    ]
    try:
        return snakemake(
            workdir,
            *options,
            *TARGETS,
            config=workdir / "study.yaml",
            env=cluster.env,
            timeout=RUN_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired as exc:
        queue = client(cluster, "squeue", "--states=all", "-o", "%i %j %T %r").stdout
        pytest.fail(f"SLURM run still going after {RUN_TIMEOUT_S} s; squeue:\n{queue}\n{exc}")


def test_slurm_profile_gives_the_metrics_of_a_local_run(cluster: Cluster, tmp_path: Path) -> None:
    on_cluster, local = tmp_path / "slurm", tmp_path / "local"
    tiny_study(on_cluster)
    # the local run goes on while the cluster run mostly waits for job states
    with ThreadPoolExecutor(max_workers=1) as pool:
        local_run = pool.submit(
            snakemake, local, "--cores", "1", *TARGETS, config=tiny_study(local)
        )
        result = run_on_cluster(cluster, on_cluster)
        local_result = local_run.result()
    assert result.returncode == 0, result.stderr[-4000:] + cluster.logs()
    assert local_result.returncode == 0, local_result.stderr[-3000:]

    metrics = "results/tables/metrics.csv"
    assert (on_cluster / metrics).read_bytes() == (local / metrics).read_bytes()
    # the heavy jobs went to SLURM, the trivial ones (collect, tables, plots) stayed local
    submitted = {path.name for path in (on_cluster / ".snakemake" / "slurm_logs").iterdir()}
    assert submitted == {f"rule_{rule}" for rule in CLUSTER_JOBS}, submitted
    assert "localrule collect_metrics:" in result.stderr
    assert "localrule metric_tables:" in result.stderr
    requested = client(cluster, "squeue", "--states=all", "-h", "-o", "%k %m").stdout.split("\n")
    memory = {line.split("_wildcards_")[0]: line.split()[-1] for line in requested if line}
    assert memory == {f"rule_{rule}": f"{JOB_MEM_MB}M" for rule in CLUSTER_JOBS}, requested
