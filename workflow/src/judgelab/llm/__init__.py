"""Asking a model: backends, the cached client, prompts and personas, reading the answers.

* :mod:`.backends` - the backends behind a registry by name (local GGUF, OpenAI-compatible,
  Anthropic, Bedrock); :mod:`.client` - the request cache in front of any of them;
  :mod:`.session` - one job's model session (backend, cache, usage line);
* :mod:`.prompts` - templates as data; :mod:`.personas` - persona conditions and generation;
* :mod:`.answers` - reading a label or a confidence from an answer;
* :mod:`.judging` - the pointwise judgment several studies share (requests, reading, coverage);
  :mod:`.readings` - the judgment whose label is located in the answer, with its token
  confidence (the overrating study's, which the perturbations' re-judging repeats);
* :mod:`.pricing` - what tokens cost; :mod:`.endpoints` - configs pointing at served models.
"""
