# Helpers of the ranking rules. Every answer comes from the study's plan
# (judgelab.studies.ranking.Plan): its datasets and runs, judges, qrels, measures and paths.
RANKING = PROJECT.plan("ranking")

RANKING_SYSTEMS_RE = names_re(RANKING.datasets_of("systems"))
RANKING_DOWNLOAD_RE = names_re(RANKING.datasets_of("download"))
RANKING_LIVE_RE = names_re(RANKING.judges)
RANKING_IMPORTED_RE = names_re(RANKING.imported)
RANKING_QRELS_RE = names_re(RANKING.all_qrels_names())


def ranking_runs(wildcards):
    """The run files of the wildcards' dataset, in the order of their names."""
    return list(RANKING.run_files(wildcards.dataset).values())


def ranking_run_names(wildcards):
    return json.dumps(list(RANKING.run_files(wildcards.dataset)))


def ranking_report(output, caption, category="Ranking agreement"):
    """A file of the report page, with its caption (workflow/report/<caption>.rst)."""
    return report(output, caption=f"../../report/{caption}.rst", category=category)
