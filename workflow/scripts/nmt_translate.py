"""Snakemake script of rule nmt_translate (workflow/rules/nmt.smk)."""

from tokstudy.steps.nmt import nmt_translate

nmt_translate(snakemake)
