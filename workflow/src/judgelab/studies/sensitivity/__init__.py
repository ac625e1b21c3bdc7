"""Prompt sensitivity (Arabzadeh and Clarke, "A Human-AI Comparative Analysis of Prompt Sensitivity
in LLM-Based Relevance Judgment", SIGIR 2025): how much a judge's agreement with the human labels
depends on the prompt rather than the model.

Two sources of labels, one set of tables: the authors' published judgments of GPT-4o, Llama-3.2
and Mistral with each of their prompts (binary, graded, pairwise; TREC DL 2020 and 2021),
downloaded with their digests checked; and live judges - any configured model judging a
dataset's pairs with each prompt of the study's prompt set (the project's templates, or the
authors' prompts from a copy of their prompts.json), binary, graded and pairwise (each pair in
both orders, on the authors' pair list or pairs formed from the grades), through the request
cache. Per file or live job the agreement (coverage, Cohen's kappa, weighted kappa, Krippendorff's
alpha, pairwise shares); per judge the spread over prompts with UMBRELA's prompt marked, and
human- against LLM-written prompts with a bootstrap interval; a figure.

* :mod:`.plan` - the config section ``sensitivity``: the published files selected, the live
  prompts and judges, paths, jobs, targets and the requests :mod:`judgelab.wiring.estimate` counts;
* :mod:`.paths` - its result paths, each named once;
* :mod:`.published` - the manifest and the readers of the published files;
* :mod:`.pairwise` - live pairwise judging: the pairs, both orders, the shares and the ties by
  position;
* :mod:`.science` - the agreement rows, the spread, the groups;
* :mod:`.settings`, :mod:`.jobs`, :mod:`.tables`, :mod:`.figures` - the jobs' settings, the jobs
  (``workflow/scripts/sensitivity/*.py`` call them), the renderings and the figure.
"""
