"""Faults and bad input end to end: each gives one clear line, none a silent wrong result."""

from __future__ import annotations

import hashlib
import socket
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml
from conftest import REPO
from workflow_support import snakemake


def _failure_lines(stderr: str) -> list[str]:
    """What a step printed besides its progress (INFO) records."""
    return [line for line in stderr.splitlines() if " INFO " not in line]


def _run_step(tmp_path: Path, body: str) -> tuple[subprocess.CompletedProcess, str]:
    """Run ``run_step`` in a fresh interpreter as a Snakemake script does; (result, log)."""
    script = tmp_path / "step.py"
    log = tmp_path / "step.log"
    script.write_text(
        "from pathlib import Path\n"
        "from tokstudy.workflow.dispatch import run_step\n"
        f"LOG = {str(log)!r}\n" + textwrap.dedent(body),
        encoding="utf-8",
    )
    result = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, cwd=REPO, check=False
    )
    return result, log.read_text(encoding="utf-8")


def test_an_unwritable_output_is_one_line_and_logged(tmp_path: Path) -> None:
    (tmp_path / "raw.txt").write_text("a\nb\nc\n", encoding="utf-8")
    (tmp_path / "blocker").write_text("a file, not a folder", encoding="utf-8")
    out = tmp_path / "blocker" / "train.txt"
    result, log = _run_step(
        tmp_path,
        f"""
        from tokstudy.corpora.prepare import prepare_corpus
        run_step(LOG, prepare_corpus, [Path({str(tmp_path / "raw.txt")!r})], Path({str(out)!r}),
                 Path({str(tmp_path / "h.txt")!r}), Path({str(tmp_path / "s.json")!r}),
                 label="xx", heldout=1, seed=1)
        """,
    )
    assert result.returncode == 1
    assert _failure_lines(result.stderr) == [
        f"error: NotADirectoryError: [Errno 20] Not a directory: '{out}'"
    ]
    assert f"prepare_corpus failed: NotADirectoryError: [Errno 20] Not a directory: '{out}'" in log
    assert "Traceback (most recent call last)" in log


def test_a_tokstudy_error_is_one_line_without_a_traceback(tmp_path: Path) -> None:
    result, log = _run_step(
        tmp_path,
        """
        from tokstudy.corpora.prepare import prepare_corpus
        run_step(LOG, prepare_corpus, [Path("no/such.txt")], Path("t"), Path("h"), Path("s"),
                 label="xx", heldout=1, seed=1)
        """,
    )
    line = "error: corpus of language 'xx': file not found: no/such.txt"
    assert result.returncode == 1 and _failure_lines(result.stderr) == [line]
    assert "file not found: no/such.txt" in log and "Traceback" not in log


# --- the workflow: downloads, failing steps, results_dir and config files ------------------


def run_study(workdir: Path, config: Path, *args: str) -> subprocess.CompletedProcess:
    """Snakemake on the repository's workflow with one study config, in ``workdir``."""
    return snakemake(workdir, "--cores", "1", *args, config=config)


def write_study(path: Path, languages: dict, **changes: object) -> Path:
    """A one-tokenizer study config (only its corpora are built by these tests)."""
    config = {
        "seed": 1,
        "corpus_defaults": {"heldout": 2},
        "languages": languages,
        "tokenizers": {"char": {}},
        "metrics": ["mu"],
        **changes,
    }
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A local HTTP server (127.0.0.1) serving a folder: (base URL, folder)."""
    folder = tmp_path / "served"
    folder.mkdir()
    handler = partial(QuietHandler, directory=str(folder))
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", folder
    httpd.shutdown()
    httpd.server_close()


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        """No request log on the test's stderr."""


def _serve(folder: Path, name: str, word: str) -> str:
    """Serve a 20-line corpus of ``word``; its SHA-256."""
    data = "".join(f"{word} {i}\n" for i in range(20)).encode()
    (folder / name).write_bytes(data)
    return hashlib.sha256(data).hexdigest()


def _corpus_text(workdir: Path, results: str) -> str:
    folder = workdir / results / "corpora" / "en"
    return (folder / "train.txt").read_text() + (folder / "heldout.txt").read_text()


@pytest.mark.slow
def test_two_studies_with_different_urls_never_share_a_download(
    tmp_path: Path, server: tuple[str, Path]
) -> None:
    base, folder = server
    studies = {}
    for name, word in (("a", "alpha"), ("b", "beta")):
        digest = _serve(folder, f"{name}.txt", word)
        studies[name] = write_study(
            tmp_path / f"{name}.yaml",
            {"en": {"url": f"{base}/{name}.txt", "sha256": digest}},
            results_dir=f"results/{name}",
        )
    for name in ("a", "b", "a"):
        target = f"results/{name}/corpora/en/train.txt"
        result = run_study(tmp_path, studies[name], target, "--rerun-triggers", "mtime")
        assert result.returncode == 0, result.stderr[-2000:]
    assert "alpha" in _corpus_text(tmp_path, "results/a")
    assert "beta" not in _corpus_text(tmp_path, "results/a")
    assert "beta" in _corpus_text(tmp_path, "results/b")
    assert "alpha" not in _corpus_text(tmp_path, "results/b")
    assert not (tmp_path / "resources").exists()


@pytest.mark.slow
def test_a_tampered_download_is_refused(tmp_path: Path, server: tuple[str, Path]) -> None:
    base, folder = server
    digest = _serve(folder, "en.txt", "alpha")
    study = write_study(tmp_path / "s.yaml", {"en": {"url": f"{base}/en.txt", "sha256": digest}})
    target = "results/corpora/en/train.txt"
    assert run_study(tmp_path, study, target).returncode == 0
    download = tmp_path / "results" / "downloads" / f"{digest}.raw"
    assert download.is_file()
    download.write_text("other text\n" * 20, encoding="utf-8")
    result = run_study(tmp_path, study, target, "--rerun-triggers", "mtime")
    assert result.returncode != 0
    actual = hashlib.sha256(download.read_bytes()).hexdigest()
    line = (
        f"error: corpus of language 'en': checksum mismatch for results/downloads/{digest}.raw: "
        f"expected {digest}, got {actual}"
    )
    assert line in result.stderr.splitlines()
    assert not (tmp_path / target).exists()


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("{base}/missing.txt", "HTTP Error 404: File not found"),
        ("http://127.0.0.1:{port}/en.txt", "Connection refused"),
    ],
)
@pytest.mark.slow
def test_a_failed_download_is_one_line_and_logged(
    tmp_path: Path, server: tuple[str, Path], url: str, reason: str
) -> None:
    url = url.format(base=server[0], port=_closed_port())
    digest = hashlib.sha256(b"never served").hexdigest()
    study = write_study(tmp_path / "s.yaml", {"en": {"url": url, "sha256": digest}})
    result = run_study(tmp_path, study, "results/corpora/en/train.txt")
    assert result.returncode != 0
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and "Traceback" not in result.stderr
    assert errors[0].startswith(f"error: corpus of language 'en': download of {url} failed: ")
    assert reason in errors[0]
    log = (tmp_path / "results/logs/download_corpus" / f"{digest}.log").read_text()
    assert url in log and reason in log
    assert not (tmp_path / "results/downloads" / f"{digest}.raw").exists()


def _config_error(result: subprocess.CompletedProcess) -> str:
    """The one ``config error:`` line of a run that must stop at start, without a dump."""
    output = result.stdout + result.stderr  # a dry run (-n) reports on stdout
    assert result.returncode != 0
    lines = [line for line in output.splitlines() if "config error: " in line]
    assert len(lines) == 1, output[-3000:]
    assert "Failed validating" not in output and len(output.splitlines()) < 10
    return lines[0]


@pytest.mark.slow
def test_config_errors_at_start_are_one_line(tmp_path: Path) -> None:
    english = {"en": {"chatterbot": "english"}}
    unknown = _config_error(
        run_study(tmp_path, write_study(tmp_path / "u.yaml", english, colour=1))
    )
    assert "('colour' was unexpected); valid keys: analyses, cell_costs, corpus_defaults" in unknown
    outside = _config_error(
        run_study(tmp_path, write_study(tmp_path / "o.yaml", english, results_dir=".."), "-n")
    )
    assert "config key results_dir: '..' contains the project directory" in outside
    duplicated = tmp_path / "d.yaml"
    duplicated.write_text(
        "seed: 1\nlanguages: {en: {chatterbot: english}}\ntokenizers: {char: {}}\n"
        "metrics: [mu]\nseed: 2\n",
        encoding="utf-8",
    )
    assert _config_error(run_study(tmp_path, duplicated, "-n")).endswith(
        f"config error: config file {duplicated}: line 5, column 1: duplicated key 'seed'"
    )
