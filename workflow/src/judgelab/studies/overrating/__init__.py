"""Overrating in LLM relevance judges ("When LLM Judges Inflate Scores", section 2): pointwise and
pairwise diagnostics.

Pointwise (binary 0/1 or graded 0-3 judging, one run per scale):

* ``overrate_pct`` / ``underrate_pct``: 100 x the share of pairs whose LLM label is above / below
  the human label on the run's scale; ``mean_bias``: the mean of LLM - human; ``kappa``: Cohen's
  kappa over the scale's labels. On the binary scale the human grade is binarised by the TREC rule
  (grade >= 2 is relevant); a graded run is ALSO binarised by that rule on both sides (``bin_*``
  columns; for a binary run they equal the native ones), so it can be reported beside the native
  binary run (Table 1 of When LLM Judges Inflate Scores).
* token confidence by TP / FP / TN / FN: on the binarised labels (positive = relevant), the mean
  token confidence (:func:`label_reading`) of each class, with its count.
* the human -> LLM transition matrix: human grade 0-3 (rows) x LLM label (columns), counts and
  row shares; the missing answers per human grade beside it.
* Missing answers (unparsable, or not labelled by an imported judge) are counted (``coverage``)
  and left out of every metric; they never become a label.

Pairwise (section 2.1; groups after Arabzadeh and Clarke 2025, as the paper describes them):

* Groups per query: **Best** = the passages at the highest grade present, if that grade is
  relevant; **Acceptable** = the relevant passages below it; **Unacceptable** = the non-relevant
  ones. Relevant means grade >= ``relevant_min`` (``overrating.pairwise.relevant_min``, default 2:
  the TREC binarisation the paper applies everywhere else in section 2, so grade-1 passages are
  Unacceptable; 1: only grade 0, the paper's "Non-relevant", is Unacceptable - the library
  functions' default argument). A query whose highest grade is not relevant has neither Best nor
  Acceptable.
* Settings B-A, A-U, B-U: every cross pair of the two groups of a query (never two passages of
  one group, never two queries), of which at most ``per_setting`` are drawn without replacement
  by a generator seeded with (seed, query id, setting) - the draw of a query does not depend on
  the other queries. The passage of the higher group is the ground-truth winner.
* Each pair is judged in both orders (``hi_first``: the winner is Passage 1; ``lo_first``: it is
  Passage 2) with a forced choice. Both orders prefer the winner: **correct**; both prefer the
  loser: **wrong win**; contradictory orders: **tie**; an order whose answer did not parse:
  **missing** (counted, left out).
* Per setting and overall (pooled pairs): accuracy = correct / judged pairs (ties count as
  wrong), accuracy without ties = correct / (correct + wrong wins), tie rate, wrong-wins rate
  (all in %), the mean token confidence of the judgments of correct pairs and of wrong-win pairs
  (both orders pooled; ties excluded, as the paper's Table 2), and the share of ties whose two judgments
  both have confidence > 0.95 (among ties with both confidences known).

Token confidence (see :func:`label_reading`): ``confidence`` = the overrating paper's, the probability of the
chosen label at the decoding step that generated it, in the full distribution (the softmax over
the vocabulary); ``confidence_renorm`` = the same renormalised over the label tokens. Tables 1 and
2 show the one ``overrating.confidence`` names (default ``full``) first, the other after it.

Modules (config section ``overrating``, target ``overrating``, rules
``workflow/rules/overrating/overrating.smk`` and ``workflow/rules/overrating/``, prompts
``resources/prompts/overrating/``): :mod:`.plan` (the section resolved: cells, prompts, imported
judges, paths, jobs, targets), :mod:`.prompts` (the checked templates, where an answer's label is
and its token confidence), :mod:`.pointwise`, :mod:`.pairwise`, :mod:`.tables` (Tables 1 and 2),
:mod:`.figures`, :mod:`.settings` (the typed settings the plan builds and the rules carry: the pair
sampling, the tables' options), :mod:`.jobs` (one function per workflow job, each taking its
inputs, outputs and one settings value per concern: a judge is a
:class:`judgelab.llm.judge.Judge`), :mod:`.estimate`.
"""
