"""System-ranking agreement: does a judge rank retrieval systems as the human assessors do?

Config section ``ranking``; target ``ranking``; rules ``workflow/rules/ranking/ranking.smk`` and
``workflow/rules/ranking/``; jobs :mod:`judgelab.studies.ranking.jobs`; report captions
``workflow/report/ranking/``. No prompt of its own: a live judge uses a PERAS template and
persona (``ranking.template``, ``ranking.persona``), so its requests are PERAS's for the same pair.

Per dataset (the keys of ``ranking.runs``):

* the runs: made by the workflow (``source: systems``, one job per system), downloaded (one job
  per run) or the user's files (no job);
* per live judge, one job labelling the pool (every run's top ``pool_depth`` over the dataset's
  topics) where the passage text is known; per imported judge, one job reading its qrels file;
* one scoring job per dataset, every run under every qrels of the dataset (``human``, each
  judge, and ``human+<judge>`` with ``unjudged: fill``), writing scores.tsv; each run's scores
  under each qrels are kept by content digest (:mod:`judgelab.studies.ranking.scorecache`), so a
  new run is the only one scored under the human qrels and an imported judge's (which do not
  depend on the runs), and a new judge's qrels scores every run under it alone (a live judge's
  labels cover the pool of all runs, so with a live judge a new run changes them and every run is
  scored again under them: the new pool pairs are new calls, the others cache hits);
* one job for the dataset's correlations.tsv (with the label agreement) and pool.tsv;
* with ``ranking.circularity.enabled``, one job building every judge's run (the base run's top
  ``depth`` re-ordered by the judge's labels: :mod:`judgelab.studies.ranking.circularity`) and
  ranking it among the dataset's runs in circularity.tsv, one figure job per judge x measure (with
  the default depth, ``pool_depth``, the labels are the pool's: no request beyond the pool's, so
  the estimate counts none);
  one figure job per judge x measure; one leaderboard over every dataset.
"""

from __future__ import annotations

import glob
import re
from collections.abc import Iterator
from dataclasses import replace
from functools import cached_property
from pathlib import Path

import pandas as pd

from judgelab.analysis.committee import Committee
from judgelab.data.imported import study_imports
from judgelab.data.readers import qrels_topics, read_run, run_name
from judgelab.data.sources import JUDGED_QUERIES
from judgelab.errors import InputError, NothingToDo
from judgelab.llm.backends.base import Request
from judgelab.llm.judge import Judge
from judgelab.llm.judging import judgment_requests
from judgelab.project.config import check_name
from judgelab.project.plan import LLMJob, StudyPlan
from judgelab.studies.ranking.ppi import check_n
from judgelab.studies.ranking.runs import DL21_RUNS_BASE, dl21_run_names, run_urls
from judgelab.studies.ranking.scores import EXPECTED, EXPECTED_SCALE, expected_name, parse_measures
from judgelab.studies.ranking.settings import (
    Circularity,
    CircularityFigure,
    Comparisons,
    CorrelationSettings,
    Figure,
    JudgeCost,
    Pooling,
    PPISettings,
    Scoring,
    System,
)
from judgelab.studies.ranking.systems import check_system

#: Where the public runs of a dataset are served by default: ``<base>/<dataset>/input.<run>.txt``.
RUNS_BASE = DL21_RUNS_BASE.rsplit("/", 1)[0]

#: The dataset whose runs are bundled by name (``names: null``).
BUNDLED_RUNS = {"dl21": "the 63 TREC DL 2021 passage runs (resources/ranking/dl21_runs.txt)"}


#: The name of the human qrels in the results (never a judge's name).
HUMAN = "human"

#: The figures per dataset x judge x measure.
FIGURE_KINDS = ("scores", "ranks")

#: Keys of a runs entry that only one source reads.
SOURCE_KEYS = {"names": "download", "url": "download", "paths": "files"}

_GLOB = re.compile(r"[*?\[]")


def measure_slug(measure: str) -> str:
    """A measure's name as a path component (``P(rel=2)@10`` -> ``P_rel_2_@10``)."""
    return re.sub(r"[^A-Za-z0-9@.\-]+", "_", measure).strip("_") or "measure"


def filled_name(judge: str) -> str:
    """The reference qrels of ``judge`` with ``unjudged: fill``: the human qrels, holes filled."""
    return f"{HUMAN}+{judge}"


def _n_topics(src, dataset: str) -> int:
    """The topics an estimate counts: the dataset table's, or before a download its judged
    queries (:data:`~judgelab.data.sources.JUDGED_QUERIES`)."""
    return (
        src.pairs["qid"].nunique() if src.exact else JUDGED_QUERIES.get(dataset, src.pairs["qid"].nunique())
    )


def _stand_in(src, dataset: str, n: int) -> pd.DataFrame:
    """``n`` stand-in pairs of the dataset's first query and passage (an upper bound's requests,
    never looked up in the cache)."""
    first = src.pairs.iloc[0]
    return pd.DataFrame(
        {
            "dataset": dataset,
            "qid": "q",
            "query": [first["query"]] * n,
            "docid": "d",
            "passage": first["passage"],
        }
    )


class Plan(StudyPlan):
    name = "ranking"
    paths = {
        "ranking_run": "{results}/ranking/{dataset}/runs/{run}.txt",
        "ranking_labels": "{results}/ranking/{dataset}/labels/{model}.tsv",
        "ranking_persona_labels": "{results}/ranking/{dataset}/labels/{model}/{persona}.tsv",
        "ranking_score_cache": "{results}/ranking/{dataset}/scores/cache",
        "ranking_scores": "{results}/ranking/{dataset}/scores.tsv",
        "ranking_correlations": "{results}/ranking/{dataset}/correlations.tsv",
        "ranking_pool": "{results}/ranking/{dataset}/pool.tsv",
        "ranking_leaderboard": "{results}/ranking/tables/leaderboard.{ext}",
        "ranking_robustness": "{results}/ranking/tables/robustness.{ext}",
        "ranking_cost_figure": "{results}/ranking/tables/cost.{ext}",
        "ranking_figure": "{results}/ranking/{dataset}/figures/{kind}/{judge}/{measure}.{ext}",
        "ranking_circularity": "{results}/ranking/{dataset}/circularity.{ext}",
        "ranking_circularity_runs": "{results}/ranking/{dataset}/circularity/runs",
        "ranking_circularity_scores": "{results}/ranking/{dataset}/circularity/scores.tsv",
        "ranking_circularity_figure": "{results}/ranking/{dataset}/circularity/figures/{judge}/{measure}.{ext}",
        # a live judge's labels of the base run's top depth below the pool (depth > pool_depth)
        "ranking_circularity_labels": "{results}/ranking/{dataset}/circularity/labels/{model}.tsv",
        "ranking_calibration": "{results}/ranking/tables/calibration.tsv",
        "ranking_reliability": "{results}/ranking/tables/reliability.tsv",
        "ranking_reliability_figure": "{results}/ranking/figures/reliability.{ext}",
        "ranking_ppi": "{results}/ranking/tables/ppi.{ext}",
        "ranking_ppi_figure": "{results}/ranking/figures/ppi.{ext}",
    }

    def __init__(self, project):
        super().__init__(project)
        self._files: dict[str, dict[str, str]] = {}
        self._estimates: dict = {}

    # -- the section --------------------------------------------------------------------------

    @property
    def datasets(self) -> list[str]:
        """The datasets the study ranks systems on: the keys of ``ranking.runs``."""
        return list(self.section["runs"])

    def source(self, dataset: str) -> str:
        return self.section["runs"][dataset]["source"]

    def datasets_of(self, source: str) -> list[str]:
        return [d for d in self.datasets if self.source(d) == source]

    @property
    def systems(self) -> dict[str, dict]:
        """The rankers of ``source: systems`` by run name (``ranking.systems``)."""
        return dict(self.section["systems"])

    @property
    def pool_depth(self) -> int:
        return int(self.section["pool_depth"])

    @property
    def candidates(self) -> str:
        """What a system ranks per topic: ``judged`` or ``all`` passages of the table."""
        return self.section["candidates"]

    @property
    def depth(self) -> int:
        """Documents a system returns per topic."""
        return int(self.section["depth"])

    @property
    def fill(self) -> bool:
        return self.section["unjudged"] == "fill"

    @cached_property
    def measures(self) -> list[str]:
        return list(parse_measures(self.section["measures"], key="ranking.measures"))

    @cached_property
    def measure_slugs(self) -> dict[str, str]:
        """Path component -> measure name."""
        out: dict[str, str] = {}
        for i, m in enumerate(self.measures):
            slug = measure_slug(m)
            if slug in out:
                raise InputError(
                    f"the measures {out[slug]!r} and {m!r} share the file name {slug!r}; keep one",
                    key=f"ranking.measures[{i}]",
                )
            out[slug] = m
        return out

    def correlation_settings(self) -> CorrelationSettings:
        """The options of :func:`judgelab.studies.ranking.correlation.correlations`
        (``ranking.correlation``; a tracked param of the correlations jobs)."""
        c = self.section["correlation"]
        return CorrelationSettings(
            k=int(c["top_k"]),
            p=float(c["rbo_p"]),
            n_boot=int(c["n_boot"]),
            seed=int(c["seed"]),
            ci_alpha=float(c["ci_alpha"]),
            sig_alpha=float(c["sig_alpha"]),
            test=str(c["test"]),
            ci_method=str(c["ci_method"]),
        )

    # -- the live judges: PERAS's template and persona ----------------------------------------

    @property
    def template(self) -> str:
        return self.section["template"]

    @property
    def persona(self) -> str:
        """``ranking.persona``, or where it is null (the default) ``default`` when the run has it,
        else the run's first persona (as the perturbation study's)."""
        chosen = self.section["persona"]
        if chosen is not None:
            return chosen
        run = list(self.project.personas)
        return "default" if "default" in run or not run else run[0]

    def judge(self, model: str, persona: str | None = None) -> Judge:
        """The judge of the pool-labelling jobs of ``model`` (any dataset; the rule's one tracked
        param of the judge): PERAS's judge of ``model`` with the study's template
        (``ranking.template``) and persona (:attr:`persona`) - its model entry, the template's
        text, labels and bound, the persona, PERAS's reading of the label (``peras.answer``) and
        its coverage floor -, so its requests are the PERAS judge job's for the same pair and
        its labels of a pair PERAS judged are PERAS's."""
        return self.judge_section("peras").judge(model, self.template, persona or self.persona)

    def peras_judgments(self, dataset: str, model: str, persona: str | None = None) -> list[str]:
        """The PERAS judge table of the same dataset, model, template and persona when PERAS runs
        it: the ranking judge job waits for it, so the pairs PERAS judges are cache hits there
        instead of being asked twice at once."""
        peras = self.project.plan("peras")
        if not (peras.enabled and dataset in peras.datasets and model in peras.judges):
            return []
        persona = persona or self.persona
        if persona not in self.project.personas:
            return []
        return [
            self.project.path(
                "judgments", dataset=dataset, model=model, template=self.template, persona=persona
            )
        ]

    # -- imported judges ----------------------------------------------------------------------

    @cached_property
    def imported(self) -> dict[str, tuple[str, str]]:
        """The imported judges of the study: name -> (template, persona) choosing the judge's
        file. An entry of ``ranking.imported_judges`` is a name (its first template, and the
        persona ``default``, else its first) or ``{name, template, persona}``."""
        chosen = study_imports(
            self.section["imported_judges"],
            self.project.imported,
            self.datasets,
            key="ranking.imported_judges",
            datasets_key="the keys of ranking.runs",
        )
        for i, (name, (judge, _, _)) in enumerate(chosen.items()):
            if judge.scale == "binary":
                raise InputError(
                    f"imported judge {name!r} labels on the binary scale: its 0/1 labels are not "
                    "grades, so its nDCG gains and its agreement with the human grades 0-3 would "
                    "not compare (imported_judges.<name>.scale: graded, or leave it out here)",
                    key=f"ranking.imported_judges[{i}]",
                )
        return {name: (template, persona) for name, (_, template, persona) in chosen.items()}

    def imported_file(self, name: str, dataset: str) -> str:
        template, persona = self.imported[name]
        return self.project.imported_file(name, dataset, template, persona)

    @property
    def committees(self) -> dict[str, Committee]:
        """The committee judges (``ranking.committees``), by name; a persona committee's members
        are ``<judge>@<persona>`` (:meth:`committee_members`)."""
        return {
            str(name): Committee(
                name=str(name),
                members=tuple(m for m, _, _ in self._members(spec)),
                rule=str(spec["rule"]),
                quorum=int(spec["quorum"]),
            )
            for name, spec in self.section["committees"].items()
        }

    def _members(self, spec) -> list[tuple[str, str, str | None]]:
        """(member name, judge, persona or None) of a committee's spec: its judges, or with
        ``personas`` every judge x persona (a judge at the study's persona is the judge itself)."""
        personas = spec.get("personas")
        if personas is None:
            return [(str(j), str(j), None) for j in spec["judges"]]
        return [
            (str(j) if p == self.persona else f"{j}@{p}", str(j), None if p == self.persona else str(p))
            for j in spec["judges"]
            for p in personas
        ]

    def committee(self, name: str) -> Committee:
        """A committee's settings (a tracked param of its job)."""
        return self.committees[name]

    def committee_members(self, name: str) -> list[tuple[str, str, str | None]]:
        """A committee's members in order: (name, judge, persona: None for the judge's own labels
        at the study's persona)."""
        return self._members(self.section["committees"][name])

    def member_file(self, dataset: str, name: str) -> str:
        """A committee member's label file: a judge's, or a judge's pool labels under a persona."""
        for member, judge, persona in self.persona_members(dataset):
            if member == name:
                return self.project.path(
                    "ranking_persona_labels", dataset=dataset, model=judge, persona=persona
                )
        return self.labels_file(dataset, name)

    def persona_members(self, dataset: str) -> list[tuple[str, str, str]]:
        """The (member, judge, persona) of the dataset's persona committees whose labels come from
        a persona labelling job (the study's persona left out: the judge's own labels)."""
        out: dict[str, tuple[str, str, str]] = {}
        compared = set(self.judges_of(dataset))
        for c in self.section["committees"]:
            if c not in compared:
                continue
            for member, judge, persona in self.committee_members(c):
                if persona is not None:
                    out.setdefault(member, (member, judge, persona))
        return list(out.values())

    def _check_committees(self) -> None:
        from judgelab.analysis.committee import check_committee, check_members

        models = set(self.project.config["models"])
        for name, c in self.committees.items():
            key = f"{self.name}.committees.{name}"
            check_name(name, key)
            if name in models or name in self.imported or name == HUMAN:
                raise InputError(
                    f"{name!r} already names a model, an imported judge or the human qrels", key=key
                )
            spec = self.section["committees"][name]
            if spec.get("personas") is None:
                known = list(self.judges) + list(self.imported)
                check_committee(
                    c,
                    key,
                    "judges",
                    known,
                    "a judge of the study (ranking.judges and ranking.imported_judges)",
                )
                continue
            check_members(
                [str(j) for j in spec["judges"]],
                f"{key}.judges",
                self.judges,
                "a live judge of the study (ranking.judges; only a live judge labels the pool under "
                "other personas)",
            )
            check_members(
                [str(p) for p in spec["personas"]],
                f"{key}.personas",
                list(self.project.personas),
                "a persona of the run (personas.include, personas.custom)",
            )
            # the members (judges x personas) as the shared check sees them: count, rule, quorum
            check_committee(c, key, "personas", list(c.members), "a member")

    # -- judges and qrels ---------------------------------------------------------------------

    def judges_of(self, dataset: str) -> list[str]:
        """The judges compared on a dataset: the live judges, the imported judges that labelled
        it, then the committees whose every member judges it."""
        imported = [n for n in self.imported if dataset in self.project.imported[n].datasets]
        members = set(self.judges) | set(imported)
        committees = [n for n, spec in self.section["committees"].items() if set(spec["judges"]) <= members]
        return list(self.judges) + imported + committees

    def is_live(self, judge: str) -> bool:
        return judge in self.judges

    def reference(self, judge: str) -> str:
        """The qrels a judge's system ranking is compared with: ``human``, or with ``unjudged:
        fill`` and a live judge, ``human+<judge>`` (the human qrels with their holes filled by
        the judge; an imported judge labels only judged pairs, so it fills nothing)."""
        base = judge[: -len(EXPECTED)] if judge.endswith(EXPECTED) else judge
        return filled_name(base) if self.fill and self.is_live(base) else HUMAN

    @property
    def expected_judges(self) -> list[str]:
        """The live judges also scored with their expected grades (``ranking.expected_gain``)."""
        return [str(j) for j in self.section["expected_gain"]]

    def comparisons(self, dataset: str) -> list[tuple[str, str]]:
        """(judge, reference) of every comparison on a dataset: each judge's labels, then the
        expected-gain qrels of ``ranking.expected_gain`` (``<judge>@expected``, against the judge's
        reference)."""
        out = [(j, self.reference(j)) for j in self.judges_of(dataset)]
        return out + [(expected_name(j), self.reference(j)) for j in self.expected_judges]

    def label_comparisons(self, dataset: str) -> list[tuple[str, str]]:
        """The comparisons of a judge's labels (the runs a judge builds re-order by its labels)."""
        return [(j, r) for j, r in self.comparisons(dataset) if not j.endswith(EXPECTED)]

    def qrels_names(self, dataset: str) -> list[str]:
        """Every qrels a dataset's runs are scored under: ``human``, each judge, each filled
        reference."""
        names = [HUMAN] + self.judges_of(dataset)
        names += [r for _, r in self.comparisons(dataset) if r != HUMAN]
        names += [j for j, _ in self.comparisons(dataset) if j.endswith(EXPECTED)]
        return list(dict.fromkeys(names))

    def qrels_kind(self, qrels: str) -> tuple[str, str]:
        """(kind, judge) of a qrels name: (``human``, ""), (``judge``, name), (``filled``, name) or
        (``expected``, name)."""
        if qrels == HUMAN:
            return "human", ""
        if qrels.startswith(f"{HUMAN}+"):
            return "filled", qrels[len(HUMAN) + 1 :]
        if qrels.endswith(EXPECTED):
            return "expected", qrels[: -len(EXPECTED)]
        return "judge", qrels

    def labels_file(self, dataset: str, judge: str) -> str:
        return self.project.path("ranking_labels", dataset=dataset, model=judge)

    def calibration_cells(self) -> list[dict[str, str]]:
        """Every dataset x judge's pool labels (dataset, judge, and the template and persona it
        labelled with: the study's for a live judge, the file's for an imported one; committees
        left out: their labels carry no probability), in the order of the calibration job's label
        inputs."""
        return [
            {
                "dataset": d,
                "judge": j,
                "template": self.template if self.is_live(j) else self.imported[j][0],
                "persona": self.persona if self.is_live(j) else self.imported[j][1],
            }
            for d in self.datasets
            for j in self.judges_of(d)
            if j not in self.committees  # a committee's labels carry no probability
        ]

    def calibration_inputs(self) -> dict[str, list[str]]:
        """The calibration job's inputs: every dataset table (the human grades) and the label file
        of every :meth:`calibration_cells` entry."""
        return {
            "pairs": [self.project.table(d) for d in self.datasets],
            "labels": [self.labels_file(c["dataset"], c["judge"]) for c in self.calibration_cells()],
        }

    def score_inputs(self, dataset: str) -> dict:
        """The scoring job's inputs: every run file of the dataset (in :meth:`run_files` order),
        the dataset table (the human grades) and the label file of every judge of the dataset (in
        :meth:`judges_of` order)."""
        return {
            "runs": list(self.run_files(dataset).values()),
            "pairs": self.project.table(dataset),
            "labels": [self.labels_file(dataset, j) for j in self.judges_of(dataset)],
        }

    def score_cache(self, dataset: str) -> str:
        """The folder of the dataset's scores kept by content digest
        (:mod:`judgelab.studies.ranking.scorecache`; not an output: it outlives the jobs)."""
        return self.project.path("ranking_score_cache", dataset=dataset)

    def score_qrels(self, dataset: str) -> list[tuple[str, str, str]]:
        """(qrels name, kind, judge) of every qrels the dataset's runs are scored under."""
        return [(q, *self.qrels_kind(q)) for q in self.qrels_names(dataset)]

    def scoring(self, dataset: str) -> Scoring:
        """What the scoring job of a dataset scores its runs under (a tracked param): every qrels
        of :meth:`score_qrels`, the judges whose label files the job reads (:meth:`judges_of`
        order), the measures and the run names (:meth:`run_files` order)."""
        return Scoring(
            qrels=tuple(self.score_qrels(dataset)),
            judges=tuple(self.judges_of(dataset)),
            measures=tuple(self.measures),
            run_names=tuple(self.run_files(dataset)),
        )

    def pooling(self, dataset: str) -> Pooling:
        """The dataset's pool (a tracked param of the judge and correlations jobs): its run names,
        in the order of their files (:meth:`run_files`), and ``ranking.pool_depth``."""
        return Pooling(run_names=tuple(self.run_files(dataset)), depth=self.pool_depth)

    def compared(self, dataset: str) -> Comparisons:
        """What the dataset's correlations job compares (a tracked param): its judges (the order
        of their label files), each with its reference (:meth:`comparisons`) and the measures."""
        return Comparisons(
            dataset=dataset,
            judges=tuple(self.judges_of(dataset)),
            references=tuple(self.comparisons(dataset)),
            measures=tuple(self.measures),
            costs=tuple(self.judge_cost(j) for j in self.judges_of(dataset)),
            member_costs=tuple(
                replace(self.judge_cost(judge), judge=member, persona=persona)
                for member, judge, persona in self.persona_members(dataset)
            ),
        )

    def judge_cost(self, judge: str) -> JudgeCost:
        """How a judge's cost is counted beside its quality: imported (no call), or its backend,
        prices and batch mode, and the template and persona of its requests."""
        from judgelab.llm.pricing import Prices

        if judge in self.committees:
            return JudgeCost(judge=judge, backend="committee", members=self.committees[judge].members)
        if not self.is_live(judge):
            return JudgeCost(judge=judge, imported=True, backend="imported")
        spec = self.project.config["models"][judge]
        prices = Prices.from_spec(spec, judge)
        return JudgeCost(
            judge=judge,
            backend=str(spec.get("backend") or ""),
            prices=(prices.input, prices.output, prices.batch_factor) if prices else (),
            batch=bool(spec.get("batch")),
            template=self.template,
            persona=self.persona,
        )

    def figure(self, dataset: str, judge: str, measure: str) -> Figure:
        """The comparison of the figure job of ``dataset`` x ``judge`` x ``measure`` (the measure's
        path component, :attr:`measure_slugs`; a tracked param)."""
        return Figure(
            dataset=dataset, judge=judge, reference=self.reference(judge), measure=self.measure_slugs[measure]
        )

    # -- the run built by the judge (circularity) ---------------------------------------------

    @property
    def circularity_enabled(self) -> bool:
        """``ranking.circularity.enabled``: build and rank the judge-built runs."""
        return bool(self.section["circularity"]["enabled"])

    @property
    def circularity_depth(self) -> int:
        """d, the documents per topic re-ordered: ``ranking.circularity.depth``, null =
        :attr:`pool_depth`."""
        depth = self.section["circularity"]["depth"]
        return self.pool_depth if depth is None else int(depth)

    def circularity_base(self, dataset: str) -> str:
        """``ranking.circularity.base`` (``""`` for null: the job takes the run the human qrels
        score highest on the first measure); a named run that is not a run of ``dataset`` is an
        error naming the key."""
        base = self.section["circularity"]["base"]
        if base is None:
            return ""
        names = self.run_names(dataset)
        if str(base) not in names:
            raise InputError(
                f"{base!r} is not a run of dataset {dataset} (its runs: {', '.join(sorted(names))}); "
                "name one of them, or null for the run the human qrels score highest",
                key="ranking.circularity.base",
            )
        return str(base)

    @property
    def circularity_labelled(self) -> list[str]:
        """The live judges that label the base run below the pool (``depth`` > ``pool_depth``):
        one ``ranking_circularity_judge`` job each, per dataset; none at the default depth."""
        return (
            list(self.judges) if self.circularity_enabled and self.circularity_depth > self.pool_depth else []
        )

    def circularity_labels(self, dataset: str) -> list[str]:
        """The circularity labels files of :attr:`circularity_labelled` (the circularity job reads
        them instead of the pool's for those judges)."""
        return [
            self.project.path("ranking_circularity_labels", dataset=dataset, model=m)
            for m in self.circularity_labelled
        ]

    def circularity(self, dataset: str) -> Circularity:
        """The judge-built runs of ``dataset`` (a tracked param of its circularity job): the base
        run (:meth:`circularity_base`), the depth, each judge with its reference
        (:meth:`comparisons`) and the measures."""
        return Circularity(
            dataset=dataset,
            base=self.circularity_base(dataset),
            depth=self.circularity_depth,
            references=tuple(self.label_comparisons(dataset)),
            measures=tuple(self.measures),
            labelled=tuple(self.circularity_labelled),
        )

    def circularity_figure(self, dataset: str, judge: str, measure: str) -> CircularityFigure:
        """The comparison of the circularity figure of ``dataset`` x ``judge`` x ``measure`` (the
        measure's path component; a tracked param)."""
        return CircularityFigure(
            dataset=dataset, judge=judge, reference=self.reference(judge), measure=self.measure_slugs[measure]
        )

    @property
    def ppi_enabled(self) -> bool:
        return bool(self.section["ppi"]["enabled"])

    def ppi(self) -> PPISettings:
        """The PPI job's settings (``ranking.ppi``; a tracked param): every dataset x comparison,
        the measures, n, draws, seed, alpha, and the correlation settings' paired test."""
        c, corr = self.section["ppi"], self.correlation_settings()
        return PPISettings(
            comparisons=tuple((d, j, r) for d in self.datasets for j, r in self.comparisons(d)),
            measures=tuple(self.measures),
            n=tuple(int(x) for x in c["n"]),
            draws=int(c["draws"]),
            seed=int(c["seed"]),
            alpha=float(c["alpha"]),
            test=corr.test,
            sig_alpha=corr.sig_alpha,
        )

    def _check_ppi(self) -> None:
        """An n of ``ranking.ppi.n`` at or above a dataset's topics is an error before any job,
        against what bounds them: its ``queries``, ``max_queries``, the topics of its qrels file
        (bundled sample or files) or a public dataset's judged queries before a download. The PPI
        job checks it again against the topics both qrels score."""
        n = [int(x) for x in self.section["ppi"]["n"]]  # distinct, each >= 2: the schema's
        datasets = self.project.config["datasets"]
        for d in self.datasets:
            spec = datasets.get(d, {})
            bounds = [len(spec["queries"])] if spec.get("queries") else []
            if spec.get("max_queries"):
                bounds.append(int(spec["max_queries"]))
            if spec.get("source") == "download" and d in JUDGED_QUERIES:
                bounds.append(JUDGED_QUERIES[d])
            elif spec.get("source") in ("sample", "files"):
                qrels = self.project.local(self.project.raw_files(d)["qrels"])
                if qrels.is_file():  # a missing file is the dataset's own error
                    bounds.append(qrels_topics(qrels))
            if bounds:
                check_n(n, min(bounds), d)

    def _check_expected(self) -> None:
        """``ranking.expected_gain``: live judges only (their label distributions give the
        expected grade; an imported judge's file has labels), and gain-based measures only."""
        key = f"{self.name}.expected_gain"
        for i, j in enumerate(self.expected_judges):
            if j not in self.judges:
                raise InputError(
                    f"{j!r} is not a live judge of the study (ranking.judges: {self.judges}); expected "
                    "grades come from a live judge's label distribution (an imported judge gives labels)",
                    key=f"{key}[{i}]",
                )
        if self.expected_judges:
            for name, m in parse_measures(self.measures, f"{self.name}.measures").items():
                if m.NAME != "nDCG" or "rel" in m.params:
                    raise InputError(
                        f"the measure {name} counts relevance against a threshold, which expected "
                        f"gains (scaled by {EXPECTED_SCALE}) do not have; expected-gain qrels serve "
                        "gain-based measures (nDCG) only: drop it from ranking.measures or empty "
                        "ranking.expected_gain",
                        key=key,
                    )

    def _check_circularity(self) -> None:
        for d in self.datasets:
            if self.source(d) != "files":  # the files' names are known once the files are there
                self.circularity_base(d)

    # -- runs ---------------------------------------------------------------------------------

    def run_names(self, dataset: str) -> list[str]:
        """The dataset's run names, in order: the systems' names; the download's ``names`` (or the
        bundled list); the files' names (from the files matched, see :meth:`run_files`)."""
        spec = self.section["runs"][dataset]
        if spec["source"] == "systems":
            return list(self.systems)
        if spec["source"] == "download":
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
        """Where a download run comes from: ``<url>/input.<run>.txt`` (``url`` null: the public
        repository's ``runs/<dataset>``)."""
        base = self.section["runs"][dataset].get("url") or f"{RUNS_BASE}/{dataset}"
        return run_urls([run], base)[run]

    def system(self, run: str) -> System:
        """The system of run ``run`` (``source: systems``; a tracked param of its job): its entry
        of ``ranking.systems``, ``ranking.candidates`` and ``ranking.depth``."""
        return System(name=run, spec=dict(self.systems[run]), candidates=self.candidates, depth=self.depth)

    # -- the study's contract -----------------------------------------------------------------

    def models(self) -> list[str]:
        return list(self.judges) if self.datasets else []

    def check(self) -> None:
        super().check()
        key = self.name
        if not self.datasets:
            raise NothingToDo(
                "the study is enabled but ranks nothing: name a dataset and its runs under "
                "ranking.runs (e.g. dl21: {source: systems}); set ranking.enabled: false to skip it",
                key=f"{key}.runs",
            )
        known = self.project.config["datasets"]
        for d in self.datasets:
            self._check_runs(d, known)
        self._check_expected()
        self._check_committees()
        if self.datasets_of("systems"):
            if not self.systems:
                raise InputError(
                    f"datasets {self.datasets_of('systems')} take source systems, but no system is configured",
                    key=f"{key}.systems",
                )
            for name, spec in self.systems.items():
                check_name(name, f"{key}.systems.{name}")
                check_system(name, spec, f"{key}.systems.{name}")
        peras = self.judge_section("peras")
        if self.judges:
            if self.template not in peras.names:
                raise InputError(
                    f"{self.template!r} is not a PERAS template (keys of peras.templates: "
                    f"{sorted(peras.names)})",
                    key=f"{key}.template",
                )
            _ = peras.template(self.template)  # the template file is loaded and checked here
            if self.persona not in self.project.personas:
                raise InputError(
                    f"{self.persona!r} is not a persona of the run (personas.include and "
                    f"personas.custom: {list(self.project.personas)})",
                    key=f"{key}.persona",
                )
        for i, m in enumerate(self.judges):
            if m == HUMAN or m.startswith(f"{HUMAN}+"):
                raise InputError(
                    f"a judge cannot be called {m!r} (the human qrels' name)", key=f"{key}.judges[{i}]"
                )
        for i, name in enumerate(self.imported):
            if name == HUMAN or name.startswith(f"{HUMAN}+"):
                raise InputError(
                    f"an imported judge cannot be called {name!r} (the human qrels' name)",
                    key=f"{key}.imported_judges[{i}]",
                )
        if not any(self.judges_of(d) for d in self.datasets):
            raise NothingToDo(
                "no judge to compare with the human qrels: no live judge (ranking.judges, null = "
                f"the top-level `judges`: {self.judges}) and no imported judge of these datasets "
                "(ranking.imported_judges)",
                key=f"{key}.judges",
            )
        _ = self.measure_slugs
        if self.circularity_enabled:
            self._check_circularity()
        if self.ppi_enabled:
            self._check_ppi()

    def _check_runs(self, d: str, known: dict) -> None:
        key = f"ranking.runs.{d}"
        if d not in known:
            raise InputError(f"{d!r} is not a key of `datasets` (known: {sorted(known)})", key=key)
        spec = self.section["runs"][d]
        src = spec["source"]
        for k, needs in SOURCE_KEYS.items():
            if spec.get(k) is not None and src != needs:
                raise InputError(
                    f"only read with source {needs!r} (this entry's source is {src!r})", key=f"{key}.{k}"
                )
        if src == "download":
            names = spec.get("names")
            if names is None and d not in BUNDLED_RUNS:
                raise InputError(
                    f"name the runs to download: only {d!r} of {sorted(BUNDLED_RUNS)} has a bundled list "
                    f"({'; '.join(BUNDLED_RUNS.values())})",
                    key=f"{key}.names",
                )
            for i, n in enumerate(names or []):
                check_name(str(n), f"{key}.names[{i}]")
            if names is not None and len(set(map(str, names))) != len(names):
                raise InputError("a run is named twice", key=f"{key}.names")
            if names is not None and not names:
                raise InputError("no run named", key=f"{key}.names")
        if src == "files" and not spec.get("paths"):
            raise InputError("source 'files' needs the run files (paths or globs)", key=f"{key}.paths")

    def llm_jobs(self) -> list[LLMJob]:
        jobs = [
            LLMJob("ranking_judge", m, (("dataset", d), ("model", m)), self.name)
            for d in self.datasets
            for m in self.judges
        ]
        jobs += [
            LLMJob("ranking_persona_judge", m, (("dataset", d), ("model", m), ("persona", p)), self.name)
            for d in self.datasets
            for _, m, p in self.persona_members(d)
        ]
        return jobs + [
            LLMJob("ranking_circularity_judge", m, (("dataset", d), ("model", m)), self.name)
            for d in self.datasets
            for m in self.circularity_labelled
        ]

    def targets(self) -> list[str]:
        path = self.project.path
        out = []
        for d in self.datasets:
            out += [path(k, dataset=d) for k in ("ranking_scores", "ranking_correlations", "ranking_pool")]
            for judge, _ in self.comparisons(d):
                out += [
                    path("ranking_figure", dataset=d, kind=kind, judge=judge, measure=slug, ext=ext)
                    for slug in self.measure_slugs
                    for kind in FIGURE_KINDS
                    for ext in ("png", "pdf")
                ]
        out += [path("ranking_leaderboard", ext=e) for e in ("tsv", "md", "tex", "html")]
        out += [path("ranking_robustness", ext=e) for e in ("tsv", "md", "html")]
        out += [path("ranking_cost_figure", ext=e) for e in ("png", "pdf")]
        out += [path("ranking_calibration"), path("ranking_reliability")]
        out += [path("ranking_reliability_figure", ext=e) for e in ("png", "pdf")]
        if self.circularity_enabled:
            out += self.circularity_targets()
        if self.ppi_enabled:
            out += [path("ranking_ppi", ext=e) for e in ("tsv", "md", "html")]
            out += [path("ranking_ppi_figure", ext=e) for e in ("png", "pdf")]
        return out

    def robustness_inputs(self) -> dict[str, list[str]]:
        """The robustness table's inputs: every dataset's correlations, its circularity table
        (when enabled) and, when the perturbation study runs attacks, its attack tables (files
        only: no study imports another)."""
        path = self.project.path
        attacks: list[str] = []
        if self.project.enabled("perturbations"):
            pert = self.project.plan("perturbations")
            if pert.attacks:
                attacks = [path("perturbation_attacks", dataset=d) for d in pert.datasets]
        return {
            "correlations": [path("ranking_correlations", dataset=d) for d in self.datasets],
            "circularity": (
                [path("ranking_circularity", dataset=d, ext="tsv") for d in self.datasets]
                if self.circularity_enabled
                else []
            ),
            "attacks": attacks,
        }

    def circularity_targets(self) -> list[str]:
        """Per dataset circularity.{tsv,md,html} and its scores; per judge x measure the figure."""
        path = self.project.path
        out = []
        for d in self.datasets:
            out += [path("ranking_circularity", dataset=d, ext=e) for e in ("tsv", "md", "html")]
            out.append(path("ranking_circularity_scores", dataset=d))
            out += [
                path("ranking_circularity_figure", dataset=d, judge=judge, measure=slug, ext=ext)
                for judge, _ in self.label_comparisons(d)
                for slug in self.measure_slugs
                for ext in ("png", "pdf")
            ]
        return out

    def run_targets(self) -> list[str]:
        """The runs the workflow makes or downloads and the dataset tables (``snakemake
        ranking_runs``: after it, ``judgelab estimate`` counts the pool exactly)."""
        out = [self.project.table(d) for d in self.datasets]
        for d in self.datasets:
            if self.source(d) != "files":
                out += list(self.run_files(d).values())
        return out

    # -- the estimate -------------------------------------------------------------------------

    def requests(self, job, ctx) -> Iterator[tuple[str, Request, bool]]:
        """The judge job's requests: one per pool pair whose passage text is known, built by
        :func:`judgelab.llm.judging.judgment_requests` as the job builds them (so a pair PERAS asked
        is found in the cache). The pool is exact when the dataset table and every run are at
        hand (systems are ranked in memory); before the runs are downloaded, or before a public
        dataset is, at most ``pool_depth`` x runs pairs per topic stand in (an upper bound,
        never looked up)."""
        d = job.wc["dataset"]
        if job.rule == "ranking_circularity_judge":
            pairs, exact = self._estimate_circularity(ctx, d)
            stage = "circularity"
        else:
            pairs, exact = self._estimate_pool(ctx, d)
            stage = "ranking_judge"
        persona = job.wc.get("persona") or self.persona
        judge = self.judge(job.model, persona).but(persona=ctx.persona_text(persona))
        reqs = judgment_requests(pairs, judge)
        for req in reqs:
            cached = exact and job.model in ctx.backends and ctx.cached(job.model, req) is not None
            yield stage, req, cached

    def _estimate_circularity(self, ctx, dataset: str) -> tuple[pd.DataFrame, bool]:
        """The circularity labelling job's pairs (depth past the pool): the base run's top
        ``depth`` pairs with a known text that are not in the pool - exact when the pool is (the
        base run chosen as the job chooses it: the named run, or the best under the human qrels
        on the first measure, scored here with ir-measures); else at most ``depth - pool_depth``
        per topic (an upper bound)."""
        from judgelab.studies.ranking.circularity import base_top, best_run, unlabelled_pairs
        from judgelab.studies.ranking.pool import human_qrels
        from judgelab.studies.ranking.scores import score_runs

        pool_pairs, exact, runs = self._pool_estimate(ctx, dataset)
        src = ctx.pairs(dataset)
        if exact and runs is not None:
            base = self.circularity_base(dataset)
            if not base:
                scores = score_runs(runs, human_qrels(src.pairs), [self.measures[0]])
                base = best_run(scores.assign(qrels="human"), self.measures[0])
            todo = unlabelled_pairs(base_top(runs[base], self.circularity_depth), pool_pairs, src.pairs)
            ctx.notes.append(
                f"ranking {dataset}: the circularity base {base}'s top {self.circularity_depth}: "
                f"{len(todo):,} pairs with a known text below the pool (the live judges' extra requests)"
            )
            return todo, True
        n_topics = _n_topics(src, dataset)
        n = n_topics * (self.circularity_depth - self.pool_depth)
        stand_in = _stand_in(src, dataset, n)
        return stand_in, False

    def _estimate_pool(self, ctx, dataset: str) -> tuple[pd.DataFrame, bool]:
        pairs, exact, _ = self._pool_estimate(ctx, dataset)
        return pairs, exact

    def _pool_estimate(self, ctx, dataset: str) -> tuple[pd.DataFrame, bool, dict | None]:
        """The pool's judge pairs, whether they are exact, and the runs they came from (None
        when a stand-in counts them), built once per estimate."""
        key = (id(ctx), dataset)
        if key not in self._estimates:
            self._estimates[key] = self._build_pool(ctx, dataset)
        return self._estimates[key]

    def _build_pool(self, ctx, dataset: str) -> tuple[pd.DataFrame, bool, dict | None]:
        from judgelab.studies.ranking.pool import judge_pairs, pool_table
        from judgelab.studies.ranking.systems import rank

        src = ctx.pairs(dataset)
        runs = None
        n_runs = len(self.run_names(dataset)) if self.source(dataset) != "files" else None
        if src.exact:
            if self.source(dataset) == "systems":
                cand, depth = self.section["candidates"], int(self.section["depth"])
                runs = {n: rank(src.pairs, s, candidates=cand, depth=depth) for n, s in self.systems.items()}
            else:
                files = (
                    self.run_files(dataset, ctx.directory)
                    if self.source(dataset) == "files"
                    else {n: str(Path(ctx.directory) / f) for n, f in self.run_files(dataset).items()}
                )
                n_runs = len(files)
                if all(Path(f).is_file() for f in files.values()):
                    runs = {n: read_run(f, n) for n, f in files.items()}
        if runs is not None:
            pool_ = pool_table(runs, src.pairs, self.pool_depth)
            pairs = judge_pairs(pool_, dataset)
            ctx.notes.append(
                f"ranking {dataset}: pool of {len(runs)} runs at depth {self.pool_depth}: {len(pool_):,} "
                f"pairs, {len(pairs):,} with a known passage text (the judge's requests)"
            )
            return pairs, True, runs
        if n_runs is None:  # run files of a dataset that is not downloaded yet
            n_runs = len(self.run_files(dataset, ctx.directory))
        n_topics = _n_topics(src, dataset)
        per_topic = self.pool_depth * n_runs
        if src.exact:
            per_topic = min(per_topic, src.pairs["docid"].nunique())
        n = n_topics * per_topic
        stand_in = _stand_in(src, dataset, n)
        why = "the runs are not downloaded yet" if src.exact else "the dataset is not downloaded yet"
        ctx.notes.append(
            f"ranking {dataset}: {why}: at most {self.pool_depth} x {n_runs} runs = {per_topic:,} pool pairs per "
            f"topic x {n_topics} topics = {n:,} requests counted (an upper bound; `snakemake ranking_runs` "
            "fetches the runs and the dataset, after which the pool is counted exactly)"
        )
        return stand_in, False, None
