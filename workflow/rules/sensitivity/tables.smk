# The spread over prompts, human- against LLM-written prompts, and the figure.


rule sensitivity_tables:
    input:
        agreement=path("sensitivity_agreement", ext="tsv"),
    output:
        **{
            f"{t}_{e}": path(f"sensitivity_{t}", ext=e)
            for t in ("spread", "groups")
            for e in ("tsv", "tex", "html")
        },
        spread_md=report(
            path("sensitivity_spread", ext="md"),
            caption="../../report/sensitivity/spread.rst",
            category="Prompt sensitivity",
        ),
        groups_md=report(
            path("sensitivity_groups", ext="md"),
            caption="../../report/sensitivity/groups.rst",
            category="Prompt sensitivity",
        ),
        figure_png=report(
            path("sensitivity_figure", ext="png"),
            caption="../../report/sensitivity/figure.rst",
            category="Prompt sensitivity",
        ),
        figure_pdf=path("sensitivity_figure", ext="pdf"),
    log:
        PROJECT.log("sensitivity/tables"),
    conda:
        "../../../envs/judgelab.yaml"
    params:
        bootstrap=SENSITIVITY.bootstrap().param(),
    script:
        "../../scripts/sensitivity/tables.py"
