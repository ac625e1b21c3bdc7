"""Which runs each dataset of the ranking study ranks and where their files are: the systems'
names, a download's names (or the bundled DL21 list, or its ``urls``) and URLs, the user's files (globs expanded,
names checked, every line read once as the jobs read it), and each system's tracked param."""

from __future__ import annotations

import glob
import re
from pathlib import Path

from judgelab.data.readers import read_run, run_name
from judgelab.errors import InputError
from judgelab.studies.ranking.runs import DL21_RUNS_BASE, dl21_run_names, run_urls
from judgelab.studies.ranking.section import Section
from judgelab.studies.ranking.settings import System

#: Where the public runs of a dataset are served by default: ``<base>/<dataset>/input.<run>.txt``.
RUNS_BASE = DL21_RUNS_BASE.rsplit("/", 1)[0]

_GLOB = re.compile(r"[*?\[]")


class RunFiles(Section):
    """The run names and files of every dataset (the user's files resolved once per plan)."""

    def __init__(self, project) -> None:
        super().__init__(project)
        self._files: dict[str, dict[str, str]] = {}

    def run_names(self, dataset: str) -> list[str]:
        """The dataset's run names, in order: the systems' names; the download's ``names`` (or the
        bundled list); the files' names (from the files matched, see :meth:`run_files`)."""
        spec = self.section["runs"][dataset]
        if spec["source"] == "systems":
            return list(self.systems)
        if spec["source"] == "download":
            if spec.get("urls") is not None:
                return [str(n) for n in spec["urls"]]
            if spec.get("names") is not None:
                return [str(n) for n in spec["names"]]
            return dl21_run_names(self.project.resources)
        return list(self.run_files(dataset))

    def run_files(self, dataset: str, directory: str | Path | None = None) -> dict[str, str]:
        """Run name -> run file. Systems and downloads: ``{results}/ranking/<dataset>/runs/``.
        Files: each of ``paths`` (relative to the working directory, or to ``directory``), a glob
        expanded in sorted order; a pattern that matches nothing, a path that does not exist, or
        two files of one name are errors naming the key (asked when the jobs are scheduled, so a
        run file need not exist when the config is loaded)."""
        spec = self.section["runs"][dataset]
        if spec["source"] != "files":
            return {
                n: self.project.path("ranking_run", dataset=dataset, run=n) for n in self.run_names(dataset)
            }
        if directory is None and dataset in self._files:
            return self._files[dataset]
        base = Path(directory) if directory is not None else None
        out: dict[str, str] = {}
        where: dict[str, str] = {}
        for i, pattern in enumerate(spec["paths"]):
            key = f"ranking.runs.{dataset}.paths[{i}]"
            full = str(base / pattern) if base is not None and not Path(pattern).is_absolute() else pattern
            if _GLOB.search(pattern):
                matched = sorted(glob.glob(full))
                if not matched:
                    raise InputError(f"the pattern {pattern!r} matches no file", key=key)
            else:
                if not Path(full).is_file():
                    raise InputError(f"run file {pattern} does not exist", key=key)
                matched = [full]
            for f in matched:
                name = run_name(f)
                if any(c.isspace() for c in name):
                    raise InputError(f"the run name {name!r} of {f} has white space", key=key)
                if name in out:
                    raise InputError(
                        f"{f} and {where[name]} are both named {name!r} (the file name without "
                        "'input.' and its extension); rename one",
                        key=key,
                    )
                out[name], where[name] = f, f
        if directory is None:
            self._check_run_files(out)
            self._files[dataset] = out
        return out

    def _check_run_files(self, files: dict[str, str]) -> None:
        """Every line of the user's run files, read as the jobs read them
        (:func:`judgelab.data.readers.read_run`), when the rules first ask for them - before any
        job, so ``snakemake -n`` stops at a bad line; once while a file is unchanged
        (:mod:`judgelab.project.inputs`: the 63 DL21 runs take 0.7 s to read)."""
        from functools import partial

        from judgelab.project.inputs import InputCheck, check_inputs

        checks = []
        for name, f in files.items():
            opened = self.project.local(f)
            checks.append(InputCheck(f"run {name}", (opened,), partial(read_run, opened, name), (f,)))
        check_inputs(checks, self.project.workdir)

    def run_file(self, dataset: str, run: str) -> str:
        files = self.run_files(dataset)
        if run not in files:
            raise InputError(f"no run {run!r} (runs: {sorted(files)})", key=f"ranking.runs.{dataset}")
        return files[run]

    def run_url(self, dataset: str, run: str) -> str:
        """Where a download run comes from: its entry of ``urls``, else ``<url>/input.<run>.txt``
        (``url`` null: the public repository's ``runs/<dataset>``)."""
        spec = self.section["runs"][dataset]
        if spec.get("urls") is not None:
            return str(spec["urls"][run])
        base = spec.get("url") or f"{RUNS_BASE}/{dataset}"
        return run_urls([run], base)[run]

    def system(self, run: str) -> System:
        """The system of run ``run`` (``source: systems``; a tracked param of its job): its entry
        of ``ranking.systems``, ``ranking.candidates`` and ``ranking.depth``."""
        return System(name=run, spec=dict(self.systems[run]), candidates=self.candidates, depth=self.depth)
