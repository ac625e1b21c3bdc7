"""judgelab: cached, reproducible LLM relevance-judge experiments."""

__version__ = "0.1.0"
