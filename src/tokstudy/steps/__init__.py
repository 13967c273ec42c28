"""The step layer: what each Snakemake rule runs, one module per ``.smk`` file.

``tokstudy.steps.<stage>.<rule>`` is the function that rule ``<rule>`` of
``workflow/rules/<stage>.smk`` runs: its script ``workflow/scripts/<rule>.py`` is two
lines that import it and call it with Snakemake's ``snakemake`` object. A step function
reads the rule's files, parameters and wildcards, turns them into library arguments and
calls the library through :func:`tokstudy.workflow_step.run_step` (the rule's log, one-line
errors). Steps sit on top: no library module imports :mod:`tokstudy.steps`, and the steps
import nothing of Snakemake (``tests/test_step_layer.py`` holds the layout).
"""

from __future__ import annotations

from typing import Any, Protocol


class Snakemake(Protocol):
    """What a step uses of the object Snakemake hands a ``script:``.

    ``input``, ``output``, ``log``: the rule's files (named entries as attributes, all of
    them by position); ``params``, ``wildcards``: the rule's parameters and the job's
    wildcard values (attributes); ``threads``: the cores the job was given.
    """

    input: Any
    output: Any
    params: Any
    wildcards: Any
    threads: int
    log: Any
