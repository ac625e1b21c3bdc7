# Beyond the paper: each prompt's binary and graded labels (published files, live judges' tables)
# and each judge's committee over prompts as qrels for a dataset's runs (sensitivity.rankings):
# tau of the systems' order against the human order on the same pairs and on the full qrels.


if SENSITIVITY.ranking_datasets:

    rule sensitivity_rankings:
        input:
            # the run files' globs expanded when the job is scheduled (not when the config is read)
            unpack(lambda wc: SENSITIVITY.ranking_files()),
        output:
            **{
                f"{t}_{e}": path(f"sensitivity_{t}", ext=e)
                for t in ("rankings", "rankings_spread")
                for e in ("tsv", "tex", "html")
            },
            rankings_md=report(
                path("sensitivity_rankings", ext="md"),
                caption="../../report/sensitivity/rankings.rst",
                category="Prompt sensitivity",
            ),
            rankings_spread_md=report(
                path("sensitivity_rankings_spread", ext="md"),
                caption="../../report/sensitivity/rankings_spread.rst",
                category="Prompt sensitivity",
            ),
        log:
            PROJECT.log("sensitivity/rankings"),
        conda:
            "../../../envs/judgelab.yaml"
        resources:
            **cpu_job(30, 3000),
        params:
            rankings=lambda wc: SENSITIVITY.rankings().param(),
        script:
            "../../scripts/sensitivity/rankings.py"
