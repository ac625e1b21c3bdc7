"""Prompt sensitivity: does a judge's binary relevance label agree with the TREC-binarised human grade?

The smallest complete study, made by ``docs/study-template/new_study.py`` for the next study to
start from: every dataset x judge's pairs judged with a binary template (``judgment`` kind, labels
0/1) through the shared core's :mod:`judgelab.llm.judging` (the same requests as any study judging the
same pair), then one agreement table (coverage, Cohen's kappa against the human grade binarised by
the TREC rule) over every cell.

* :mod:`.plan` - the config section ``sensitivity``: its cells, template, paths, jobs, targets and
  the requests :mod:`judgelab.wiring.estimate` counts;
* :mod:`.science` - the agreement row of one judged table;
* :mod:`.jobs` - one function per workflow job (``workflow/scripts/sensitivity_*.py`` call them).
"""
