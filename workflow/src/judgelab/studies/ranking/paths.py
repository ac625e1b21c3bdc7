"""The ranking study's result paths (named once: :data:`PATHS`, the plan's ``paths``) and its
targets: everything ``snakemake ranking`` makes, the circularity's, and the runs and dataset tables
``snakemake ranking_runs`` fetches."""

from __future__ import annotations

from judgelab.studies.ranking.inputs import Inputs

#: The study's result paths under ``{results}`` (the plan's ``paths``).
PATHS = {
    "ranking_run": "{results}/ranking/{dataset}/runs/{run}.txt",
    "ranking_labels": "{results}/ranking/{dataset}/labels/{model}.tsv",
    "ranking_persona_labels": "{results}/ranking/{dataset}/labels/{model}/{persona}.tsv",
    "ranking_score_cache": "{results}/ranking/{dataset}/scores/cache",
    "ranking_scores": "{results}/ranking/{dataset}/scores.tsv",
    "ranking_correlations": "{results}/ranking/{dataset}/correlations.tsv",
    "ranking_pool": "{results}/ranking/{dataset}/pool.tsv",
    # value agreement (Bland-Altman) per judge x measure x level, and the folder of its figures
    # (<judge>.png and .pdf: a judge's is drawn with the table, by the dataset's tables job)
    "ranking_bland_altman": "{results}/ranking/{dataset}/bland_altman.tsv",
    "ranking_bland_altman_figures": "{results}/ranking/{dataset}/bland_altman",
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
    # self-consistency (peras.repeats above 1): a live judge's k labels of every pool pair, and per
    # judge x reference x measure each repeat's tau, their spread and the majority's tau
    "ranking_repeats": "{results}/ranking/{dataset}/repeats/{model}.tsv",
    "ranking_repeat_taus": "{results}/ranking/{dataset}/repeats.{ext}",
    "ranking_calibration": "{results}/ranking/tables/calibration.tsv",
    "ranking_reliability": "{results}/ranking/tables/reliability.tsv",
    "ranking_reliability_figure": "{results}/ranking/figures/reliability.{ext}",
    "ranking_ppi": "{results}/ranking/tables/ppi.{ext}",
    "ranking_ppi_figure": "{results}/ranking/figures/ppi.{ext}",
    # the systems' scores estimated from the labels people collected (ranking.annotated)
    "ranking_ppi_estimate": "{results}/ranking/{dataset}/ppi_estimate.{ext}",
}

#: The figures per dataset x judge x measure.
FIGURE_KINDS = ("scores", "ranks")


class Targets(Inputs):
    """The study's targets (every one from :data:`PATHS`)."""

    def targets(self) -> list[str]:
        path = self.project.path
        out = []
        for d in self.datasets:
            out += [
                path(k, dataset=d)
                for k in (
                    "ranking_scores",
                    "ranking_correlations",
                    "ranking_pool",
                    "ranking_bland_altman",
                    "ranking_bland_altman_figures",
                )
            ]
            if self.repeated:
                out += [path("ranking_repeat_taus", dataset=d, ext=e) for e in ("tsv", "md")]
            for judge, _ in self.comparisons(d) if self.figures_enabled else ():
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
        out += [
            path("ranking_ppi_estimate", dataset=d, ext=e)
            for d in self.annotated_datasets
            for e in ("tsv", "md")
        ]
        if self.circularity_enabled:
            out += self.circularity_targets()
        if self.ppi_enabled:
            out += [path("ranking_ppi", ext=e) for e in ("tsv", "md", "html")]
            out += [path("ranking_ppi_figure", ext=e) for e in ("png", "pdf")]
        return out

    def circularity_targets(self) -> list[str]:
        """Per dataset circularity.{tsv,md,html} and its scores; per judge x measure the figure."""
        path = self.project.path
        out = []
        for d in self.datasets:
            out += [path("ranking_circularity", dataset=d, ext=e) for e in ("tsv", "md", "html")]
            out.append(path("ranking_circularity_scores", dataset=d))
            out += [
                path("ranking_circularity_figure", dataset=d, judge=judge, measure=slug, ext=ext)
                for judge, _ in (self.label_comparisons(d) if self.figures_enabled else ())
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
