"""Rewriting perturbations and query-dependent insertions ("When LLM Judges Inflate Scores", section 3).

Do LLM judges assess meaning or surface cues? Passages are perturbed and re-judged by the judge
that labelled them, with the same template and persona, and the label changes are counted.

* **Sampling** (:func:`sample_judged`): for each judge, per query at most ``per_label``
  passages per label the judge predicted (0-3), drawn with a seed from its original judgment
  table. Unparsed answers have no label and are never sampled. The draw of one (query, label)
  group depends only on the seed, the query id, the label and the group's docids, so judges
  that agree on a group draw the same passages (and share their rewrites).
* **Pooling** (:func:`pool_samples`): the judges' samples are pooled so that each passage is
  rewritten once per variant; each judge is re-judged on its own sample only
  (:func:`rejudge_pairs`).
* **Rewrites** PSV (passive voice), ACV (active voice), SUM (summary), EXP (expansion): one
  request per pooled passage with a bounded ``max_tokens`` (:func:`rewrite_requests`), then an
  LLM meaning check (:func:`meaning_check_requests`, answer parsed strictly by
  :func:`parse_meaning_verdict`). :func:`meaning_filter` keeps exactly the rewrites the check
  calls preserved; a rejected rewrite stays in the table with its reason: ``changed`` (the check
  said No), ``unparsable`` (the check's answer did not parse: counted, never a verdict) or
  ``empty`` (no text left after cleaning; not checked).
* **Insertions** at the start of passages that both the human grade (0) and the judge (label 0)
  call non-relevant: SEM - one sentence from the rewriter that answers the query using none of
  the query's non-stopword terms, verified in code (:func:`sem_failure`: no query term, at
  least :data:`SEM_MIN_WORDS` words) and requested again up to a bound (:func:`generate_sem`),
  failures recorded; the candidates are the sampled pairs (so at most ``per_label`` per query
  and judge); LEX - the paper's fixed template sentence listing the query
  terms (:func:`lex_sentence`); QRY - the query string itself (:func:`qry_sentence`).
* **Outcomes**: transition matrices from the judge's original label to its label on each
  variant (:func:`transition_counts`, :func:`transition_table`), label shifts
  (:func:`shift_table`), label distributions after each insertion (:func:`distribution_table`),
  and the kept fraction per rewrite variant (:func:`kept_table`).

Query terms (:func:`query_terms`): the query is split into words (runs of letters and digits,
an inner apostrophe kept: ``don't``, ``goldfish's``); a word is a stopword if its lower-cased
form, or that form without a possessive ``'s``, is in the configured stopword list
(``perturbations.stopwords``, :func:`load_stopwords`: NLTK's 179 English stopwords by default,
function words only; scikit-learn's ``ENGLISH_STOP_WORDS`` drops real query terms such as "us",
"three", "show"); the other words, de-duplicated case-insensitively, in query order, are the
query terms. SEM sentences may come from a reviewed file (:func:`read_reviewed_sem`) instead of
the rewriter, checked the same way.

Original labels (:mod:`.originals`): the PERAS judgment of ``template`` x ``persona``, or (as in
the paper) the overrating study's graded run; the re-judging is made exactly like the original.
The rewrite filter (``rewrite_filter``): each variant's own kept rewrites, or only the passages
kept by every variant (:func:`kept_by_all`, reported either way).

SEM verification (:func:`sem_violations`): the sentence is split into words the same way; a
word matches a query term when their :func:`inflection_forms` intersect. A word's forms are the
word itself, case folded with a possessive ``'s`` removed, and what undoing one suffix gives:
``-s``, ``-es``, ``-ies``/``-ied`` -> ``-y``, ``-ing``/``-ed`` (each also with an ``e`` restored
and with a doubled final consonant undone); such forms under 3 letters are not used. So matching is
case-insensitive and catches, e.g., goldfish / Goldfishes / GOLDFISH's, grow / grows / growing /
growed, study / studies / studied / studying, bake / bakes / baked / baking, run / runs /
running, box / boxes. It does NOT catch irregular forms (``grew``, ``grown``, ``mice``),
derivations (``growth``, ``grower``, ``-ly``), comparatives (``-er``, ``-est``), spelling
variants, or a term inside a compound word (``fish`` in ``goldfish``). It errs towards
rejecting (``news`` matches ``new``, ``caring`` matches ``car``), which only costs another attempt.

Modules (config section ``perturbations``, target ``perturbations``, rules
``workflow/rules/perturbations/perturbations.smk`` and ``workflow/rules/perturbations/``, prompts
``resources/prompts/perturbations/``): :mod:`.plan`, :mod:`.sampling`, :mod:`.rewrites`,
:mod:`.insertions`, :mod:`.outcomes` (re-judging, transitions, shifts, distributions),
:mod:`.figures`, :mod:`.originals` (how a judge's original labels were made), :mod:`.settings`
(the jobs' settings values), :mod:`.jobs` (one function per workflow job), :mod:`.estimate`.
"""
