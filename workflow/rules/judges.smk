# Shared stage - where each judge stands: per dataset, every judge of the run that labelled it
# (the live judges PERAS runs there, imported and published judges) against the human grades and
# against each other; one leaderboard beside the ranking study's system correlations
# (judgelab.project.standing). Only with an imported or published judge in the run.


rule judges_agreement:
    input:
        unpack(lambda wc: PROJECT.source_inputs(wc.dataset)),
        pairs=path("dataset"),
        files=lambda wc: PROJECT.standing_files(wc.dataset),
    output:
        table=path("judges_agreement"),
        png=path("judges_figure", ext="png"),
        pdf=path("judges_figure", ext="pdf"),
    log:
        PROJECT.log("judges/{dataset}"),
    conda:
        "../../envs/judgelab.yaml"
    params:
        judges=lambda wc: json.dumps(PROJECT.standing_params(wc.dataset), sort_keys=True),
        bundled=lambda wc: PROJECT.source_bundled(wc.dataset),
    script:
        "../scripts/judges_agreement.py"


rule judges_leaderboard:
    input:
        **PROJECT.standing_leaderboard_inputs(),
    output:
        tsv=path("judges_leaderboard", ext="tsv"),
        md=path("judges_leaderboard", ext="md"),
        html=path("judges_leaderboard", ext="html"),
    log:
        PROJECT.log("judges/leaderboard"),
    conda:
        "../../envs/judgelab.yaml"
    params:
        measures=PROJECT.standing_measures(),
    script:
        "../scripts/judges_leaderboard.py"


rule judges:
    input:
        PROJECT.standing_targets(),
