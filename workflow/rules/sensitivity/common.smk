# Helpers of the sensitivity rules: every answer comes from the study's plan
# (judgelab.studies.sensitivity.plan.Plan): the published files, their selection, the paths.
SENSITIVITY = PROJECT.plan("sensitivity")
