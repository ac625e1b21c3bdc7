"""Defaults that name a persona apply to the personas that run; a value you set must name one
that runs; `judges: []` says "imported judges only" once, and every study follows it.

The persona-naming keys default to null, which the plans resolve against the personas a run has:
``personas.include`` (every persona of the file), ``peras.significance.reference`` (``default``
where a judge runs it), ``peras.figures.confidence_personas`` (PERAS Figure 3's HN and LC where
a judge runs them) and ``perturbations.persona`` (``default``, else the run's first persona). The
configs are the checkout's default merged with an overlay, exactly as ``--configfile`` merges."""

from __future__ import annotations

import json

import pytest
import yaml
from conftest import ROOT

from judgelab.errors import InputError
from judgelab.wiring.estimate import estimate
from judgelab.wiring.facade import Project

TABLE1 = ["default", "HA", "LA", "HC", "LC", "HE", "LE", "HN", "LN", "HO", "LO"]
#: an imported judge with one file, persona `default` (the defaults of imported_judges.<name>)
IMPORTED = {"mine": {"path": "imports/{dataset}.qrels", "datasets": ["dl19"]}}
NO_LIVE_STUDIES = {
    "perturbations": {"enabled": False},
    "simulation": {"enabled": False},
    "ranking": {"enabled": False},  # its default ranks DL21, which the imported judge does not label
}
WITH_IMPORTED = {"imported_judges": IMPORTED, "overrating": {"imported_judges": ["mine"]}}


def load(tmp_path, monkeypatch, overlay: dict) -> Project:
    """The project `snakemake --configfile overlay.yaml` sees in the checkout."""
    monkeypatch.chdir(ROOT)
    f = tmp_path / "overlay.yaml"
    f.write_text(yaml.safe_dump(overlay))
    return Project.load([str(f)], ROOT)


def fails(tmp_path, monkeypatch, overlay: dict, message: str) -> InputError:
    with pytest.raises(InputError) as exc:
        load(tmp_path, monkeypatch, overlay)
    assert message in str(exc.value)
    return exc.value


def test_the_default_run_resolves_the_defaults_to_its_old_explicit_values(tmp_path, monkeypatch):
    p = load(tmp_path, monkeypatch, {})
    peras = p.plan("peras")
    assert list(p.personas) == TABLE1
    assert peras.reference == "default" and peras.confidence_personas == ["HN", "LC"]
    assert p.plan("perturbations").persona == "default"
    # the tracked params are the strings the default run had with the explicit values
    assert peras.figure_settings().param() == json.dumps(
        # support: the radar figures' pairs (peras.support, issue 25; parsed is the published reading)
        {
            "reference": "default",
            "confidence_personas": ["HN", "LC"],
            "confidence_label": 0,
            "support": "parsed",
        },
        sort_keys=True,
    )
    assert peras.significance_settings().param() == json.dumps(
        {"reference": "default", "n_boot": 1000, "seed": 42, "alpha": 0.05}, sort_keys=True
    )
    # the DL21 sample x the two templates
    assert sorted(peras.groups) == [("dl21", "smollm2", t) for t in ("w_cot", "wo_cot")]
    assert len(peras.significance_groups()) == len(peras.groups) == 2


def test_one_persona_runs_without_an_error_on_a_default_you_never_set(tmp_path, monkeypatch):
    p = load(tmp_path, monkeypatch, {"personas": {"include": ["default"]}})
    peras = p.plan("peras")
    assert peras.confidence_personas == [] and peras.significance_groups() == []
    assert p.plan("perturbations").persona == "default"


def test_an_imported_judge_with_persona_default_beside_the_live_judge(tmp_path, monkeypatch):
    p = load(tmp_path, monkeypatch, {"imported_judges": IMPORTED})
    peras = p.plan("peras")
    # an imported judge is scored on every dataset it labels, beside the live judges' peras.datasets
    assert peras.groups[("dl19", "mine", "imported")] == ["default"]
    assert peras.confidence_personas == ["HN", "LC"]  # the live judge runs them
    assert ("dl19", "mine", "imported") not in peras.significance_groups()


def test_an_imported_judge_and_no_live_judge(tmp_path, monkeypatch):
    overlay = {"judges": [], "imported_judges": IMPORTED, "overrating": {"enabled": False}, **NO_LIVE_STUDIES}
    p = load(tmp_path, monkeypatch, overlay)
    peras = p.plan("peras")
    assert peras.groups == {("dl19", "mine", "imported"): ["default"]}
    assert peras.confidence_personas == [] and peras.significance_groups() == []
    assert peras.llm_jobs() == []


def test_personas_without_default_adapt_the_reference_and_the_perturbed_persona(tmp_path, monkeypatch):
    p = load(tmp_path, monkeypatch, {"personas": {"include": ["HA", "LA", "HN"]}})
    peras = p.plan("peras")
    assert peras.significance_groups() == []  # no `default`: no persona-vs-default test
    assert peras.confidence_personas == ["HN"]
    pert = p.plan("perturbations")
    assert pert.persona == "HA"
    assert all(j.wc.get("persona", "HA") == "HA" for j in pert.llm_jobs())


def test_a_persona_file_of_your_own_runs_all_its_personas(tmp_path, monkeypatch):
    own = tmp_path / "mine.yaml"
    own.write_text(
        yaml.safe_dump(
            {
                "personas": {
                    "terse": {"personality_type": "terse", "instruction": "Answer tersely."},
                    "strict": {"personality_type": "strict", "instruction": "Be strict."},
                }
            },
            sort_keys=False,
        )
    )
    overlay = {"personas": {"file": str(own), "generation": {"enabled": False}}}
    p = load(tmp_path, monkeypatch, overlay)
    assert list(p.personas) == ["terse", "strict"]
    assert p.plan("perturbations").persona == "terse"


@pytest.mark.parametrize(
    "overlay, message",
    [
        (
            {"personas": {"include": ["default"]}, "peras": {"figures": {"confidence_personas": ["HN"]}}},
            "config key 'peras.figures.confidence_personas[0]': persona 'HN' is not run by any judge",
        ),
        (
            {"personas": {"include": ["HA", "LA"]}, "peras": {"significance": {"reference": "default"}}},
            "config key 'peras.significance.reference': persona 'default' is not run",
        ),
        (
            {"personas": {"include": ["default", "LA"]}, "perturbations": {"persona": "HN"}},
            "config key 'perturbations.persona': 'HN' is not a persona of the run",
        ),
        (
            {"personas": {"include": ["default", "XX"]}},
            "config key 'personas.include[1]': unknown persona 'XX'",
        ),
    ],
)
def test_a_value_you_set_must_name_a_persona_that_runs(tmp_path, monkeypatch, overlay, message):
    fails(tmp_path, monkeypatch, overlay, message)


# -- judges: [] ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "overlay, key",
    [
        (WITH_IMPORTED, "perturbations"),  # enabled by the default config: it re-judges with a live model
        ({**WITH_IMPORTED, "perturbations": {"enabled": False}}, "simulation"),
        (NO_LIVE_STUDIES, "peras"),  # no imported judge either
        ({**NO_LIVE_STUDIES, "peras": {"enabled": False}}, "overrating"),
    ],
)
def test_no_live_judge_fails_only_the_enabled_studies_left_with_nothing(tmp_path, monkeypatch, overlay, key):
    # the user's own config enables the study: judging nothing is an error naming its key
    mine = {"judges": [], **overlay, key: {**overlay.get(key, {}), "enabled": True}}
    err = fails(tmp_path, monkeypatch, mine, f"config key '{key}': the study is enabled")
    assert err.key == key and f"{key}.enabled: false" in str(err)
    # only the shipped defaults enable it: skipped, saying why (issue 26, case 8)
    p = load(tmp_path, monkeypatch, {"judges": [], **overlay})
    assert key not in p.studies and "the study is enabled" in p.skipped[key]


def test_an_enabled_overrating_names_the_imported_judges_it_could_diagnose(tmp_path, monkeypatch):
    overlay = {"judges": [], "imported_judges": IMPORTED, **NO_LIVE_STUDIES}
    message = "name the config's imported judges ['mine'] in overrating.imported_judges"
    fails(tmp_path, monkeypatch, {**overlay, "overrating": {"enabled": True}}, message)
    # enabled by the shipped defaults only: the skip line says the same
    assert message in load(tmp_path, monkeypatch, overlay).skipped["overrating"]


def test_judges_empty_is_followed_by_every_study_and_the_estimate(tmp_path, monkeypatch):
    overlay = {
        "judges": [],
        "imported_judges": IMPORTED,
        "personas": {"generation": {"enabled": False}},
        "overrating": {"imported_judges": ["mine"]},
        **NO_LIVE_STUDIES,
    }
    p = load(tmp_path, monkeypatch, overlay)
    assert p.llm_jobs() == [] and p.used_models == []
    assert p.studies == ["peras", "overrating"]
    assert p.plan("overrating").pointwise_cells == [("dl19", "mine", "graded")]
    assert p.plan("overrating").pairwise_cells == []
    table, notes = estimate(p, directory=tmp_path)
    assert table.empty
