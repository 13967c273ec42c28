"""Snakemake script of rule download_pretrained (workflow/rules/pretrained.smk)."""

from tokstudy.steps.pretrained import download_pretrained

download_pretrained(snakemake)
