"""What each ranking rule's input functions and tracked params need: the label, run and table
files of a job, its settings value (scoring, pooling, comparisons, a figure, the circularity, PPI)
and the cross-dataset tables' inputs (calibration, robustness)."""

from __future__ import annotations

from dataclasses import replace

from judgelab.errors import InputError
from judgelab.studies.ranking.judges import Judges
from judgelab.studies.ranking.runfiles import RunFiles
from judgelab.studies.ranking.settings import (
    AnnotatedEstimate,
    Circularity,
    CircularityFigure,
    Comparisons,
    Figure,
    Pooling,
    PPISettings,
    RepeatTaus,
    Scoring,
)


class Inputs(RunFiles, Judges):
    """The inputs and tracked params of the study's jobs, per dataset (and judge, measure)."""

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
        of their label files), each with its reference (:meth:`comparisons`), the measures, the
        judges that give scores with their ranges and ``ranking.score_alpha``."""
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
            scores=tuple(
                (j, *self.score_judges[j]) for j in self.judges_of(dataset) if j in self.score_judges
            ),
            score_alpha=self.section["score_alpha"] or "",
            figures=self.figures_enabled,
        )

    def repeats_files(self, dataset: str) -> list[str]:
        """The repeats table of every :attr:`repeated` judge of ``dataset``, in that order."""
        return [self.project.path("ranking_repeats", dataset=dataset, model=m) for m in self.repeated]

    def repeat_taus(self, dataset: str) -> RepeatTaus:
        """What the dataset's repeats table compares (a tracked param): each repeated judge with its
        reference (:meth:`comparisons`), the measures, the run names (:meth:`run_files` order) and
        k (:attr:`repeats`)."""
        return RepeatTaus(
            dataset=dataset,
            judges=tuple(self.repeated),
            references=tuple((j, r) for j, r in self.comparisons(dataset) if j in self.repeated),
            measures=tuple(self.measures),
            run_names=tuple(self.run_files(dataset)),
            repeats=self.repeats,
        )

    def figure(self, dataset: str, judge: str, measure: str) -> Figure:
        """The comparison of the figure job of ``dataset`` x ``judge`` x ``measure`` (the measure's
        path component, :attr:`measure_slugs`; a tracked param)."""
        return Figure(
            dataset=dataset, judge=judge, reference=self.reference(judge), measure=self.measure_slugs[measure]
        )

    def member_file(self, dataset: str, name: str) -> str:
        """A committee member's label file: a judge's, or a judge's pool labels under a persona."""
        for member, judge, persona in self.persona_members(dataset):
            if member == name:
                return self.project.path(
                    "ranking_persona_labels", dataset=dataset, model=judge, persona=persona
                )
        return self.labels_file(dataset, name)

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
            scored=tuple(j for j, _ in self.label_comparisons(dataset) if j in self.score_judges),
        )

    def circularity_figure(self, dataset: str, judge: str, measure: str) -> CircularityFigure:
        """The comparison of the circularity figure of ``dataset`` x ``judge`` x ``measure`` (the
        measure's path component; a tracked param)."""
        return CircularityFigure(
            dataset=dataset, judge=judge, reference=self.reference(judge), measure=self.measure_slugs[measure]
        )

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

    @property
    def annotated_datasets(self) -> list[str]:
        """The datasets with labels people collected (``ranking.annotated``), in its order."""
        return [str(d) for d in self.section["annotated"]]

    def annotated_inputs(self, dataset: str) -> dict:
        """The estimate job's inputs: the dataset's table, runs (in :meth:`run_files` order) and
        scores, the annotators' qrels files and, when given, the chosen-pairs file."""
        spec = self.section["annotated"][dataset]
        out = {
            "pairs": self.project.table(dataset),
            "runs": list(self.run_files(dataset).values()),
            "scores": self.project.path("ranking_scores", dataset=dataset),
            "annotated": [self.project.run_path(p) for p in spec["qrels"]],
        }
        if spec.get("chosen"):
            out["chosen"] = self.project.run_path(spec["chosen"])
        return out

    def annotated_estimate(self, dataset: str) -> AnnotatedEstimate:
        """The estimate job's settings (a tracked param): every judge of the dataset's comparisons,
        the measures, the run names and ``ranking.ppi.alpha``."""
        return AnnotatedEstimate(
            dataset=dataset,
            judges=tuple(j for j, _ in self.comparisons(dataset)),
            measures=tuple(self.measures),
            run_names=tuple(self.run_files(dataset)),
            alpha=float(self.section["ppi"]["alpha"]),
        )

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
