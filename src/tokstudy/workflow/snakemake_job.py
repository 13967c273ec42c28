"""What every step and the binder share: the ``snakemake`` object and the record of its code.

A rule names what it runs with ``params: **step(...)`` (``workflow/rules/common.smk``) and
its script is ``workflow/scripts/run_step.py``, the one dispatcher
(:func:`tokstudy.workflow.dispatch.run_named_step`): either a library function
(``tokstudy.<package>.<module>:<function>``: every analysis rule, the downloads, the
pretrained tokenizers' import and the study page), which
:mod:`tokstudy.workflow.binder` calls with the job's entries of its parameters' names, or,
for the rules not moved yet, the step ``tokstudy.workflow.<stage>.steps.<rule>`` of
``workflow/rules/<stage>.smk``, called with Snakemake's ``snakemake`` object. A step function reads
the rule's files, parameters and wildcards, turns them into library arguments and calls the
library through :func:`tokstudy.workflow.dispatch.run_step` (the rule's log, one-line
errors). Steps sit on top: no library module imports a steps module or this one, and the
steps import nothing of Snakemake (``tests/test_step_layer.py`` holds the layout).
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
