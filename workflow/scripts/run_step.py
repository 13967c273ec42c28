"""The script of every rule: runs the library function the rule's ``params.step`` names.

Never edit this file without cause: Snakemake reruns every job whose outputs are older than
its script. A rule says which function it runs with
``params: **step("tokstudy.<package>.<module>:<function>")`` (``workflow/rules/common.smk``),
which also fingerprints that function's code.
"""

from tokstudy.workflow.dispatch import run_named_step

run_named_step(snakemake)  # `snakemake`: the job, defined by Snakemake
