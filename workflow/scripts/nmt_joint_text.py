"""Snakemake script of rule nmt_joint_text (workflow/rules/nmt.smk)."""

from tokstudy.steps.nmt import nmt_joint_text

nmt_joint_text(snakemake)
