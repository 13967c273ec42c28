"""The workflow of the model stage: :mod:`.plan` (the planner of the ``models:`` section,
composed of :mod:`.section`, :mod:`.mlm_plan`, :mod:`.finetune_plan` and :mod:`.clm_plan`)
and :mod:`.steps` (what the rules of ``workflow/rules/models.smk`` run, calling
:mod:`tokstudy.models`)."""
