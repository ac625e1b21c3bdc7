"""The errors that say what happened, where, and what to do.

:class:`JudgelabError` is their base: a workflow job stopped by one prints its message as one line,
``judgelab: rule X stopped: <message>``, before anything else, its traceback only in the job's log
(:func:`judgelab.project.runner.run`); the ``judgelab`` command prints it as its error. Any other
exception is a bug and keeps its traceback.

* :class:`InputError`: bad input data or configuration, naming the file and line or the config key.
* :class:`ProviderError`: a model provider's answer that a rerun with the same config does not
  change by itself, or no answer after every retry (:mod:`judgelab.llm.backends.api`).
* :class:`judgelab.data.sources.DownloadError`: a download that failed or came incomplete.
"""

from __future__ import annotations


class JudgelabError(Exception):
    """An error whose message alone says what happened, where, and what to do (never a secret)."""


class InputError(JudgelabError, ValueError):
    """Bad input data or configuration.

    The message names the file and line (``path:line: ...``) or the config key
    (``config key 'models.x.backend': ...``) so a user can go straight to it.
    """

    def __init__(
        self, message: str, *, path: str | None = None, line: int | None = None, key: str | None = None
    ):
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        elif key is not None:
            where = f"config key '{key}': "
        super().__init__(where + message)
        self.message, self.path, self.line, self.key = message, path, line, key


class NothingToDo(InputError):
    """A study that is enabled but has nothing to do under the config (no judge, no dataset). When
    only the shipped defaults enable the study, it is skipped with one line saying why
    (:attr:`judgelab.wiring.facade.Project.skipped`); when the user's own config enables it, this
    is the error."""


class ProviderError(JudgelabError, RuntimeError):
    """A model provider stopped the job: it refused a request for a reason retrying does not cure
    (an unknown model, a used-up quota, a request it rejects), or gave no answer after every retry
    (server errors, time-outs, lost connections). The message names the model, its endpoint, the
    HTTP status and the provider's own words, and what to do; answers received before it are in
    the request cache, so a rerun pays only for the rest. ``status``: the HTTP status (None: no
    answer at all)."""

    def __init__(self, message: str, *, status: int | None = None):
        super().__init__(message)
        self.status = status
