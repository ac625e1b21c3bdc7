"""Who the ranking study compares with whom: the live judges (PERAS's judge of the study's template
and persona), the imported judges, the committees and their members, the judges of each dataset,
each judge's reference qrels, every qrels a dataset's runs are scored under, and how a judge's cost
is counted."""

from __future__ import annotations

from functools import cached_property
from typing import cast

from judgelab.analysis.committee import Committee
from judgelab.data.imported import study_imports
from judgelab.errors import InputError
from judgelab.llm.judge import Judge
from judgelab.studies.ranking.scores import EXPECTED, expected_name
from judgelab.studies.ranking.section import Section
from judgelab.studies.ranking.settings import JudgeCost

#: The name of the human qrels in the results (never a judge's name).
HUMAN = "human"


def filled_name(judge: str) -> str:
    """The reference qrels of ``judge`` with ``unjudged: fill``: the human qrels, holes filled."""
    return f"{HUMAN}+{judge}"


class Judges(Section):
    """The judges, committees and qrels of the study."""

    #: graded judges, and published judges that give scores (their scores as gains)
    imported_scales = ("graded", "scores")

    def judge(self, model: str, persona: str | None = None) -> Judge:
        """The judge of the pool-labelling jobs of ``model`` (any dataset; the rule's one tracked
        param of the judge): PERAS's judge of ``model`` with the study's template
        (``ranking.template``) and persona (:attr:`persona`) - its model entry, the template's
        text, labels and bound, the persona, PERAS's reading of the label (``peras.answer``) and
        its coverage floor -, so its requests are the PERAS judge job's for the same pair and
        its labels of a pair PERAS judged are PERAS's."""
        return self.judge_section("peras").judge(model, self.template, persona or self.persona)

    @property
    def repeats(self) -> int:
        """How many times each live judge labels the pool: the ``repeats`` of the judge section it
        judges with (``peras.repeats``: PERAS's judges are asked alike in both studies; 1: once,
        no repeats job)."""
        return int(cast("int", self.judge_section("peras").repeats))

    @property
    def repeated(self) -> list[str]:
        """The live judges asked :attr:`repeats` times (every one, when it is above 1; else none)."""
        return list(self.judges) if self.repeats > 1 else []

    def answer(self, model: str) -> str:
        """How the live judge ``model`` reads its label (``peras.answer``, ``auto`` resolved): a
        judge read from the logits draws its repeats, one that parses asks them."""
        return self.judge_section("peras").answer_of(model)

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

    @cached_property
    def imported(self) -> dict[str, tuple[str, str]]:
        """The imported judges of the study: name -> (template, persona) choosing the judge's
        file. An entry of ``ranking.imported_judges`` is a name (its first template, and the
        persona ``default``, else its first) or ``{name, template, persona}``; a published judge
        that gives scores is one too (:attr:`score_judges`), and a group takes its score judges."""
        chosen = study_imports(
            self.section["imported_judges"],
            self.project.imported,
            self.datasets,
            key="ranking.imported_judges",
            datasets_key="the keys of ranking.runs",
            groups=self.project.published_groups,
            scales=self.imported_scales,
        )
        names = [e if isinstance(e, str) else e.get("name") for e in self.section["imported_judges"]]
        for name, (judge, _, _) in chosen.items():
            if judge.scale == "binary":
                i = names.index(name)
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
    def score_judges(self) -> dict[str, tuple[float, ...]]:
        """The imported judges that give scores, not labels (published judges declared ``scores
        <low>-<high>``), with their (low, high): their scores enter as gains (round(1000 x score),
        :func:`judgelab.studies.ranking.scores.score_qrels`), as ``ranking.expected_gain``'s do."""
        return {
            n: self.project.imported[n].score_range
            for n in self.imported
            if self.project.imported[n].gives_scores
        }

    def imported_entry(self, name: str) -> str:
        """The key of the ``ranking.imported_judges`` entry that brought imported judge ``name``
        (its own entry, or its group's)."""
        groups = self.project.published_groups
        for i, e in enumerate(self.section["imported_judges"]):
            ref = e if isinstance(e, str) else e.get("name")
            if ref == name or name in groups.get(ref, ()):
                return f"ranking.imported_judges[{i}]"
        return "ranking.imported_judges"

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
        """(kind, judge) of a qrels name: (``human``, ""), (``judge``, name), (``filled``, name),
        (``expected``, name) or (``scores``, name): a judge that gives scores, its scores as gains."""
        if qrels == HUMAN:
            return "human", ""
        if qrels.startswith(f"{HUMAN}+"):
            return "filled", qrels[len(HUMAN) + 1 :]
        if qrels.endswith(EXPECTED):
            return "expected", qrels[: -len(EXPECTED)]
        if qrels in self.score_judges:
            return "scores", qrels
        return "judge", qrels

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

    @property
    def circularity_labelled(self) -> list[str]:
        """The live judges that label the base run below the pool (``depth`` > ``pool_depth``):
        one ``ranking_circularity_judge`` job each, per dataset; none at the default depth."""
        return (
            list(self.judges) if self.circularity_enabled and self.circularity_depth > self.pool_depth else []
        )
