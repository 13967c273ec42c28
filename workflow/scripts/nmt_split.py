"""Snakemake script of rule nmt_split (workflow/rules/nmt.smk)."""

from tokstudy.steps.nmt import nmt_split

nmt_split(snakemake)
