"""The ranking section's checks that only a hand check can make (the schema has every value's
type, range and choice): the references between sections (datasets, models, templates, personas,
imported judges, committees' members, the circularity's base run), the keys a run source reads,
the names no judge may take (``human``), the measures the expected gains serve, and PPI's n
against each dataset's topics (read from its qrels file). Each error names the full key; a
section with nothing to do is :class:`~judgelab.errors.NothingToDo`."""

from __future__ import annotations

from judgelab.data.readers import qrels_topics
from judgelab.data.sources import JUDGED_QUERIES
from judgelab.errors import InputError, NothingToDo
from judgelab.project.config import check_name
from judgelab.project.repeats import check_draws
from judgelab.studies.ranking.inputs import Inputs
from judgelab.studies.ranking.judges import HUMAN
from judgelab.studies.ranking.ppi import check_n
from judgelab.studies.ranking.scores import EXPECTED_SCALE, gain_measure, parse_measures
from judgelab.studies.ranking.systems import check_system

#: The dataset whose runs are bundled by name (``names: null``).
BUNDLED_RUNS = {"dl21": "the 63 TREC DL 2021 passage runs (resources/ranking/dl21_runs.txt)"}

#: Keys of a runs entry that only one source reads.
SOURCE_KEYS = {"names": "download", "url": "download", "urls": "download", "paths": "files"}


def check(plan: Inputs) -> None:
    """The section's references and names, after the base's (every dataset and judge named
    exists): the first error, naming its key."""
    key = plan.name
    if not plan.datasets:
        raise NothingToDo(
            "the study is enabled but ranks nothing: name a dataset and its runs under "
            "ranking.runs (e.g. dl21: {source: systems}); set ranking.enabled: false to skip it",
            key=f"{key}.runs",
        )
    known = plan.project.config["datasets"]
    for d in plan.datasets:
        _check_runs(plan, d, known)
    _check_expected(plan)
    # the live judges' repeats (peras.repeats: PERAS's judges) drawn from the logits need a temperature
    check_draws(plan.judge_section("peras"), list(plan.repeated), plan.template, "peras.repeats")
    _check_scores(plan)
    _check_committees(plan)
    if plan.datasets_of("systems"):
        if not plan.systems:
            raise InputError(
                f"datasets {plan.datasets_of('systems')} take source systems, but no system is configured",
                key=f"{key}.systems",
            )
        for name, spec in plan.systems.items():
            check_name(name, f"{key}.systems.{name}")
            check_system(name, spec, f"{key}.systems.{name}")
    peras = plan.judge_section("peras")
    if plan.judges:
        if plan.template not in peras.names:
            raise InputError(
                f"{plan.template!r} is not a PERAS template (keys of peras.templates: {sorted(peras.names)})",
                key=f"{key}.template",
            )
        _ = peras.template(plan.template)  # the template file is loaded and checked here
        if plan.persona not in plan.project.personas:
            raise InputError(
                f"{plan.persona!r} is not a persona of the run (personas.include and "
                f"personas.custom: {list(plan.project.personas)})",
                key=f"{key}.persona",
            )
    for i, m in enumerate(plan.judges):
        if m == HUMAN or m.startswith(f"{HUMAN}+"):
            raise InputError(
                f"a judge cannot be called {m!r} (the human qrels' name)", key=f"{key}.judges[{i}]"
            )
    for i, name in enumerate(plan.imported):
        if name == HUMAN or name.startswith(f"{HUMAN}+"):
            raise InputError(
                f"an imported judge cannot be called {name!r} (the human qrels' name)",
                key=f"{key}.imported_judges[{i}]",
            )
    if not any(plan.judges_of(d) for d in plan.datasets):
        raise NothingToDo(
            "no judge to compare with the human qrels: no live judge (ranking.judges, null = "
            f"the top-level `judges`: {plan.judges}) and no imported judge of these datasets "
            "(ranking.imported_judges)",
            key=f"{key}.judges",
        )
    _ = plan.measure_slugs
    if plan.circularity_enabled:
        _check_circularity(plan)
    if plan.ppi_enabled:
        _check_ppi(plan)
    _check_annotated(plan)


def _check_annotated(plan: Inputs) -> None:
    """``ranking.annotated``: each key a dataset of ``ranking.runs``, each file there (the labels
    themselves are read by the estimate job, whose errors name the key)."""
    for d, spec in plan.section["annotated"].items():
        key = f"ranking.annotated.{d}"
        if d not in plan.datasets:
            raise InputError(f"{d!r} is not a dataset of ranking.runs (its keys: {plan.datasets})", key=key)
        files = [(f"{key}.qrels[{i}]", p) for i, p in enumerate(spec["qrels"])]
        files += [(f"{key}.chosen", spec["chosen"])] if spec.get("chosen") else []
        for k, p in files:
            if not plan.project.local(p).is_file():
                raise InputError(f"{p} does not exist", key=k)


def _check_runs(plan: Inputs, d: str, known: dict) -> None:
    key = f"ranking.runs.{d}"
    if d not in known:
        raise InputError(f"{d!r} is not a key of `datasets` (known: {sorted(known)})", key=key)
    spec = plan.section["runs"][d]
    src = spec["source"]
    for k, needs in SOURCE_KEYS.items():
        if spec.get(k) is not None and src != needs:
            raise InputError(
                f"only read with source {needs!r} (this entry's source is {src!r})", key=f"{key}.{k}"
            )
    if src == "download" and spec.get("urls") is not None:
        _check_run_urls(spec, key)
    elif src == "download":
        names = spec.get("names")
        if names is None and d not in BUNDLED_RUNS:
            raise InputError(
                f"name the runs to download (or give `urls`): only {d!r} of {sorted(BUNDLED_RUNS)} has a bundled list "
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


def _check_run_urls(spec: dict, key: str) -> None:
    """``urls`` (run name -> URL): instead of ``names`` and ``url``, at least one run, each name a
    valid name, each URL http(s):// or file://."""
    for k in ("names", "url"):
        if spec.get(k) is not None:
            raise InputError(
                "give the runs either by `urls` or by `names` and `url`, not both", key=f"{key}.{k}"
            )
    urls = spec["urls"]
    if not urls:
        raise InputError("no run named", key=f"{key}.urls")
    for name, url in urls.items():
        check_name(str(name), f"{key}.urls.{name}")
        if not str(url).startswith(("https://", "http://", "file://")):
            raise InputError(f"{url!r} is not an http(s):// or file:// URL", key=f"{key}.urls.{name}")


def _check_committees(plan: Inputs) -> None:
    from judgelab.analysis.committee import check_committee, check_members

    models = set(plan.project.config["models"])
    for name, c in plan.committees.items():
        key = f"{plan.name}.committees.{name}"
        check_name(name, key)
        if name in models or name in plan.imported or name == HUMAN:
            raise InputError(f"{name!r} already names a model, an imported judge or the human qrels", key=key)
        spec = plan.section["committees"][name]
        for i, m in enumerate(spec["judges"]):
            if str(m) in plan.score_judges:
                raise InputError(
                    f"{m!r} gives scores ({plan.project.imported[str(m)].values}), not labels: a "
                    "committee combines its members' labels (majority, median, mean of grades)",
                    key=f"{key}.judges[{i}]",
                )
        if spec.get("personas") is None:
            known = list(plan.judges) + list(plan.imported)
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
            plan.judges,
            "a live judge of the study (ranking.judges; only a live judge labels the pool under "
            "other personas)",
        )
        check_members(
            [str(p) for p in spec["personas"]],
            f"{key}.personas",
            list(plan.project.personas),
            "a persona of the run (personas.include, personas.custom)",
        )
        # the members (judges x personas) as the shared check sees them: count, rule, quorum
        check_committee(c, key, "personas", list(c.members), "a member")


# -- judges and qrels ---------------------------------------------------------------------
def _check_ppi(plan: Inputs) -> None:
    """An n of ``ranking.ppi.n`` at or above a dataset's topics is an error before any job,
    against what bounds them: its ``queries``, ``max_queries``, the topics of its qrels file
    (bundled sample or files) or a public dataset's judged queries before a download. The PPI
    job checks it again against the topics both qrels score."""
    n = [int(x) for x in plan.section["ppi"]["n"]]  # distinct, each >= 2: the schema's
    datasets = plan.project.config["datasets"]
    for d in plan.datasets:
        spec = datasets.get(d, {})
        bounds = [len(spec["queries"])] if spec.get("queries") else []
        if spec.get("max_queries"):
            bounds.append(int(spec["max_queries"]))
        if spec.get("source") == "download" and d in JUDGED_QUERIES:
            bounds.append(JUDGED_QUERIES[d])
        elif spec.get("source") in ("sample", "files"):
            qrels = plan.project.local(plan.project.raw_files(d)["qrels"])
            if qrels.is_file():  # a missing file is the dataset's own error
                bounds.append(qrels_topics(qrels))
        if bounds:
            check_n(n, min(bounds), d)


def _check_expected(plan: Inputs) -> None:
    """``ranking.expected_gain``: live judges only (their label distributions give the
    expected grade; an imported judge's file has labels), and gain-based measures only."""
    key = f"{plan.name}.expected_gain"
    for i, j in enumerate(plan.expected_judges):
        if j not in plan.judges:
            raise InputError(
                f"{j!r} is not a live judge of the study (ranking.judges: {plan.judges}); expected "
                "grades come from a live judge's label distribution (an imported judge gives labels)",
                key=f"{key}[{i}]",
            )
    thresholded = _thresholded_measure(plan) if plan.expected_judges else None
    if thresholded:
        raise InputError(
            f"the measure {thresholded} counts relevance against a threshold, which expected "
            f"gains (scaled by {EXPECTED_SCALE}) do not have; expected-gain qrels serve "
            "gain-based measures (nDCG, Compat) only: drop it from ranking.measures or empty "
            "ranking.expected_gain",
            key=key,
        )


def _thresholded_measure(plan: Inputs) -> str | None:
    """The first of ``ranking.measures`` that counts relevance against a threshold (not a gain
    measure: expected grades and scores serve gain-based measures only), or None."""
    parsed = parse_measures(plan.measures, f"{plan.name}.measures")
    return next((name for name, m in parsed.items() if not gain_measure(m)), None)


def _check_scores(plan: Inputs) -> None:
    """The judges that give scores (:attr:`~.judges.Judges.score_judges`): their scores are gains,
    so gain-based measures only (as the expected gains), and a range that starts at 0 or above (a
    negative gain, or one shifted to start at 0, would change nDCG). Errors name the entry of
    ``ranking.imported_judges`` that brought the judge."""
    for name, score_range in plan.score_judges.items():
        key = plan.imported_entry(name)
        values = plan.project.imported[name].values
        if score_range[0] < 0:
            raise InputError(
                f"{name!r} gives {values}: a score below 0 is no gain (nDCG's gains are 0 or more, "
                "and shifting them would change nDCG); leave it out here",
                key=key,
            )
        measure = _thresholded_measure(plan)
        if measure:
            raise InputError(
                f"{name!r} gives {values}, which enter as gains (scaled by {EXPECTED_SCALE}); "
                f"the measure {measure} in ranking.measures counts relevance against a "
                "threshold that scores do not have (a threshold nobody chose): score judges "
                "serve gain-based measures (nDCG, Compat) only - drop the measure from "
                "ranking.measures, or the judge from here",
                key=key,
            )


def _check_circularity(plan: Inputs) -> None:
    for d in plan.datasets:
        if plan.source(d) != "files":  # the files' names are known once the files are there
            plan.circularity_base(d)
