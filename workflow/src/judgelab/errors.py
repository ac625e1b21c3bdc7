"""One error type for bad input: it always names where the problem is."""

from __future__ import annotations


class InputError(ValueError):
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
    (:attr:`judgelab.project.facade.Project.skipped`); when the user's own config enables it, this
    is the error."""
