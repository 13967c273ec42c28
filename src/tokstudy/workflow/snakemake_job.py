"""What the dispatcher and the binder share: the ``snakemake`` object and the record of its
code.

A rule names what it runs with ``params: **step("tokstudy.<package>.<module>:<function>")``
(``workflow/rules/common.smk``) and its script is ``workflow/scripts/run_step.py``, the one
dispatcher (:func:`tokstudy.workflow.dispatch.run_named_step`), which calls that library
function with the job's entries of its parameters' names (:mod:`tokstudy.workflow.binder`)
through :func:`tokstudy.workflow.dispatch.run_step` (the rule's log, one-line errors). No
library module imports the dispatcher, the binder or this module, and they import nothing
of Snakemake (``tests/test_step_layer.py`` holds the layout).
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


def code_record(snakemake: Snakemake) -> dict[str, str]:
    """The step a job runs and the fingerprint of its code (the rule's parameters ``step``
    and ``code``: :mod:`tokstudy.workflow.code_fingerprint`), as ``meta.json`` and ``stats.json``
    record them."""
    return {"step": snakemake.params.step, "fingerprint": snakemake.params.code}
