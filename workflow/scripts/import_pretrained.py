"""Snakemake script of rule import_pretrained (workflow/rules/pretrained.smk)."""

from tokstudy.steps.pretrained import import_pretrained

import_pretrained(snakemake)
