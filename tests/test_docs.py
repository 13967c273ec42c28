"""The user documentation: README.md stays a short guide, its set-up commands are the ones CI
runs, and every relative link in the Markdown docs reaches a file and, for ``#anchor``
links, a heading of that file (GitHub's heading slugs)."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import REPO

README = REPO / "README.md"
MAX_README_LINES = 450
#: The two set-up commands of the README, word for word: CI (.ci/run) follows them.
INSTALL_AND_RUN = (
    'python3 -m venv .venv && . .venv/bin/activate && pip install -e ".[test]" '
    "&& snakemake --cores 2"
)
RUN_TESTS = ". .venv/bin/activate && python -m pytest"

FENCE = re.compile(r"^\s*(```|~~~)")
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")


def markdown_files() -> list[Path]:
    """The Markdown files whose links are checked: README.md, config/README.md, docs/*.md."""
    return [README, REPO / "config" / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def prose_lines(text: str) -> Iterator[str]:
    """The lines of a Markdown text outside fenced code blocks."""
    in_fence = False
    for line in text.splitlines():
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        if not in_fence:
            yield line


def fenced_blocks(text: str) -> list[list[str]]:
    """The lines of each fenced code block, in order."""
    blocks: list[list[str]] = []
    current: list[str] | None = None
    for line in text.splitlines():
        if FENCE.match(line):
            if current is None:
                current = []
            else:
                blocks.append(current)
                current = None
        elif current is not None:
            current.append(line)
    return blocks


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text: markup dropped, lower case, punctuation other than
    hyphens and underscores removed, each space a hyphen."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = text.replace("`", "").replace("*", "")
    text = re.sub(r"[^\w\- ]", "", text.lower())
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every heading anchor of a Markdown text; a repeated slug gets ``-1``, ``-2`` …"""
    seen: dict[str, int] = {}
    found: set[str] = set()
    for line in prose_lines(text):
        match = HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def broken_links(path: Path) -> list[str]:
    """The relative links of one Markdown file that miss their file or heading."""
    text = path.read_text(encoding="utf-8")
    problems = []
    for line in prose_lines(text):
        for target in LINK.findall(INLINE_CODE.sub("", line)):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):
                continue  # http:, https:, mailto: …
            file_part, _, anchor = target.partition("#")
            linked = (path.parent / file_part).resolve() if file_part else path
            if not linked.exists():
                problems.append(f"{path.name}: {target}: no file {linked}")
            elif (
                anchor
                and linked.suffix == ".md"
                and anchor not in anchors(linked.read_text(encoding="utf-8"))
            ):
                problems.append(f"{path.name}: {target}: no heading #{anchor}")
    return problems


def test_readme_is_short() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_README_LINES, f"README.md has {len(lines)} lines"


def setup_commands() -> list[str]:
    """The commands of the README's set-up block (comments and blank lines left out)."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## Set-up: two commands", 1)[1]
    block = fenced_blocks(section)[0]
    return [line for line in block if line.strip() and not line.lstrip().startswith("#")]


def ci_commands() -> list[str]:
    """The command lines of .ci/run (comments and blank lines left out)."""
    lines = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def test_readme_keeps_the_two_setup_commands() -> None:
    assert setup_commands() == [INSTALL_AND_RUN, RUN_TESTS]


def test_ci_runs_the_readme_test_command() -> None:
    readme_tests = [part.strip() for part in setup_commands()[1].split("&&")]
    test_command = readme_tests[-1]
    ci = ci_commands()
    pytest_lines = [line for line in ci if "pytest" in line]
    assert pytest_lines == [test_command]
    assert ci[-1] == test_command  # the tests are what CI ends with


def test_ci_installs_as_the_readme_says() -> None:
    """.ci/run makes the same venv and installs the same package as set-up command 1."""
    venv, activate, install, _run = (p.strip() for p in setup_commands()[0].split("&&"))
    ci = ci_commands()
    assert venv in ci and activate in ci
    assert ci.index(venv) < ci.index(activate)
    ci_installs = [shlex.split(line) for line in ci if line.startswith("pip install")]
    quiet = {"-q", "--quiet"}
    assert [[w for w in words if w not in quiet] for words in ci_installs] == [shlex.split(install)]


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_reach_a_file_and_heading(path: Path) -> None:
    assert broken_links(path) == []


@pytest.mark.parametrize(
    ("heading", "expected"),
    [  # anchors GitHub gives these headings
        ("Set-up: two commands", "set-up-two-commands"),
        (
            "Which intrinsic metric predicts downstream quality?",
            "which-intrinsic-metric-predicts-downstream-quality",
        ),
        ("NMT stage: the default config's run", "nmt-stage-the-default-configs-run"),
        ("Speed, memory and scheduler benchmarks", "speed-memory-and-scheduler-benchmarks"),
        (
            "LLM tokenizers against language-specific ones (`config/llm_tokenizers.yaml`)",
            "llm-tokenizers-against-language-specific-ones-configllm_tokenizersyaml",
        ),
        ("Über Größe", "über-größe"),
        ("**Bold** [link](x.md) 2.0", "bold-link-20"),
    ],
)
def test_slug_matches_github(heading: str, expected: str) -> None:
    assert slug(heading) == expected


def test_repeated_headings_get_numbered_anchors() -> None:
    text = "# A\n## A\n```\n# A\n```\n### a\n"
    assert anchors(text) == {"a", "a-1", "a-2"}


def test_broken_links_are_found(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Other page\n## Part two\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n"
        "[ok](other.md) [ok](other.md#part-two) [ok](#page) [web](https://example.org/x)\n"
        "[gone](missing.md) [bad anchor](other.md#part-three) [bad local](#nowhere)\n"
        "`[code](missing-in-code.md)`\n"
        "```\n[fenced](missing-in-fence.md)\n```\n",
        encoding="utf-8",
    )
    problems = broken_links(page)
    assert len(problems) == 3
    assert any("missing.md" in p for p in problems)
    assert any("#part-three" in p for p in problems)
    assert any("#nowhere" in p for p in problems)
