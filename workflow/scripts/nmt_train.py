"""Snakemake script of rule nmt_train (workflow/rules/nmt.smk)."""

from tokstudy.steps.nmt import nmt_train

nmt_train(snakemake)
