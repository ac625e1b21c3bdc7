"""Relevance data: where it comes from, how it is read, the tables the stages hand on.

* :mod:`.sources` - the public sources of each dataset and verified downloads;
* :mod:`.readers` - one reader per format: qrels, topics, passage texts;
* :mod:`.prepare` - the one normalised table of a dataset; :mod:`.selection` - which of its pairs
  a run judges (query lists, published per-grade counts, seeded samples);
* :mod:`.tables` - every table one rule hands to the next (columns, readers, writers);
* :mod:`.labels` - label scales and the TREC binarisation;
* :mod:`.imported` - judges whose labels were made elsewhere (TREC qrels files);
* :mod:`.sample` - cutting the bundled sample; :mod:`.resources` - the workflow's ``resources/``;
  :mod:`.textfiles` - reading text so that bad bytes never pass silently.
"""
