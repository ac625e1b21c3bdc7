"""Every input file a job will read is checked before any job runs, by the reader the job uses.

The project asks for a check where it names the file to Snakemake (the input functions, when the
DAG is built - so ``snakemake -n`` stops with the file and line, and no model is called before a
bad line of a file a later job reads is found): a dataset's own files
(:meth:`judgelab.wiring.facade.Project.raw_checked`), an imported or published judge's file
(:meth:`~judgelab.wiring.facade.Project.imported_file`), the ranking study's run files
(``judgelab.studies.ranking.runfiles.RunFiles.run_files``). Files a job of the run makes or downloads are
checked by that job (:mod:`judgelab.data.sources`: before they take their names).

A check reads every line of its files, so at every Snakemake start it would cost a read of them
(the 63 TREC DL 2021 runs: 22 MB, about 0.7 s). :func:`check_inputs` therefore remembers a check
that passed with the files as they were (resolved path, size, modification time in ns): in this
process, and in :data:`MEMO` of the run's working directory (beside Snakemake's own records), so
the next start reads none of them again until one changes. A check that failed is never
remembered. A file rewritten with its size and modification time kept is not read again here;
the job's own reader still reads every line of it."""

from __future__ import annotations

import json
import logging
import os
import socket
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from judgelab.errors import InputError

log = logging.getLogger(__name__)

#: Where the checks that passed are remembered, relative to the run's working directory.
MEMO = Path(".snakemake") / "judgelab" / "inputs-checked.json"

#: The checks that passed, by working directory (read from its memo once per process, then kept
#: here): key -> the files' stats.
_MEMOS: dict[str, dict[str, list]] = {}


@dataclass(frozen=True)
class InputCheck:
    """One check: ``what`` names the reader and its options (e.g. ``run``, ``dataset trec utf-8``),
    ``files`` the files it reads (as this process opens them), ``check`` reads them, raising
    :class:`~judgelab.errors.InputError` at the first bad line."""

    what: str
    files: tuple[Path, ...]
    check: Callable[[], object]
    #: each file as the user wrote it (relative to the working directory), named in the error
    #: instead of the path opened
    shown: tuple[str, ...] = ()

    def run(self) -> None:
        try:
            self.check()
        except InputError as exc:
            names = dict(zip(map(str, self.files), self.shown))
            if exc.path in names:
                raise InputError(exc.message, path=names[exc.path], line=exc.line) from None
            raise


def _stats(files: Sequence[Path]) -> list[list] | None:
    """[resolved path, size, mtime_ns] of each file (None: one is missing or unreadable)."""
    out: list[list] = []
    for f in files:
        try:
            p = Path(f).resolve()
            st = p.stat()
        except OSError:
            return None
        out.append([str(p), st.st_size, st.st_mtime_ns])
    return out


def _key(what: str, stats: list[list]) -> str:
    return json.dumps([what, stats], separators=(",", ":"))


def _memo(workdir: Path) -> dict[str, list]:
    """The remembered checks of ``workdir``, read once per process; an unreadable or malformed
    memo counts as empty (every entry is a check that can run again)."""
    where = str(workdir)
    if where not in _MEMOS:
        entries: dict[str, list] = {}
        try:
            data = json.loads((workdir / MEMO).read_text(encoding="utf-8"))
            for item in data["passed"]:
                what, stats = item
                entries[_key(str(what), stats)] = stats
        except FileNotFoundError:
            pass
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.debug("the input-check memo %s is unreadable (%s); checking again", workdir / MEMO, exc)
        _MEMOS[where] = entries
    return _MEMOS[where]


def _save(workdir: Path, entries: dict[str, list]) -> None:
    """Write the memo (entries whose files changed since are dropped), atomically; a folder that
    cannot be written only means the checks run again next time."""
    kept = [json.loads(k) for k, stats in entries.items() if _stats([Path(s[0]) for s in stats]) == stats]
    path = workdir / MEMO
    tmp = path.with_name(f"{path.name}.{socket.gethostname()}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps({"passed": kept}, indent=0), encoding="utf-8")
        tmp.replace(path)
    except OSError as exc:
        log.debug("cannot write the input-check memo %s (%s)", path, exc)
        tmp.unlink(missing_ok=True)


def check_inputs(checks: Iterable[InputCheck], workdir: Path) -> None:
    """Run each check that has not passed on its files as they are now (see the module
    docstring); the first failure raises (its InputError names the file and line), the passes
    before it are remembered."""
    memo = _memo(workdir)
    new = False
    try:
        for c in checks:
            stats = _stats(c.files)
            if stats is None:  # a missing file is the caller's error, named by its config key
                c.run()
                continue
            key = _key(c.what, stats)
            if key in memo:
                continue
            c.run()
            memo[key] = stats
            new = True
    finally:
        if new:
            _save(workdir, memo)
