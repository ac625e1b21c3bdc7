"""Collecting human relevance labels in a browser (``judgelab annotate``).

* :mod:`.pairs` - the pairs file a person labels (``qid``, ``docid``, ``query``, ``passage``;
  a prepared dataset table is one), each pair's text digest, and the label scale with its
  definitions, read from a judgment template;
* :mod:`.journal` - the append-only journal of an annotator's events (label, skip, undo), synced
  to disk before the page hears back, its replay into the state of the session, and the
  annotator's TREC qrels file rewritten atomically from it;
* :mod:`.server` - the local web server (standard library only) behind a random token, and its
  checks of every request; the page's files ship in ``static/``;
* :mod:`.agreement` - two or more annotators' agreement on the pairs they share;
* :mod:`.choose` - the next topics to label (random, or stratified by a judge's label mix) and
  the pairs file of their pool pairs.
"""
