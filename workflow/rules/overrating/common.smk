# Helpers of the overrating rules. Every answer comes from the study's plan
# (judgelab.studies.overrating.Plan): its cells, prompts, imported judges and paths.
OVERRATING = PROJECT.plan("overrating")

OVR_LIVE_RE = names_re(OVERRATING.judges)
OVR_IMPORTED_RE = names_re(OVERRATING.imported)
OVR_SCALES_RE = names_re(OVERRATING.scales)  # the scales live judges run
OVR_ALL_SCALES_RE = names_re(("binary", "graded"))  # every scale (imported judges bring theirs)


def ovr_report(output, caption, category):
    """A file of the report page, with its caption (workflow/report/overrating/<caption>.rst)."""
    return report(output, caption=f"../../report/overrating/{caption}.rst", category=category)


def ovr_figure(name, caption, category, *wildcards):
    """The PNG of one figure in the report, labelled by dataset, model and ``wildcards``; the PDF
    is path(name, ext="pdf")."""
    labels = {k: f"{{{k}}}" for k in ("dataset", "model", *wildcards)}
    return report(
        path(name, ext="png"),
        caption=f"../../report/overrating/{caption}.rst",
        category=category,
        subcategory="{dataset} / {model}",
        labels=labels,
    )


def ovr_table(table, caption=None):
    """The tsv, md, tex and html files of one table (the html in the report with its caption)."""
    out = {ext: path("overrating_table", table=table, ext=ext) for ext in ("tsv", "md", "tex", "html")}
    if caption:
        out["html"] = ovr_report(
            out["html"], caption, "Overrating (When LLM Judges Inflate Scores, section 2)"
        )
    return out
