"""The workflow of the report stage: :mod:`.plan` (the planner of the study page; rule
``study_page`` of ``workflow/rules/report.smk`` names
:func:`tokstudy.report.page.build.write_study_page`)."""
