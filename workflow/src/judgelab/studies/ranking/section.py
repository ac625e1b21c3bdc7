"""The plain readings of the config section ``ranking``: its datasets and their run sources, the
systems, the pool's and the systems' depth, ``unjudged``, the measures (and their file names), the
correlation options, the live judges' template and persona, the expected-gain judges, and whether
circularity and PPI run. :class:`Section` is the base of the study's plan
(:class:`judgelab.studies.ranking.plan.Plan`): every other part of the plan reads the section
through it."""

from __future__ import annotations

import re
from functools import cached_property

from judgelab.errors import InputError
from judgelab.project.plan import StudyPlan
from judgelab.studies.ranking.scores import parse_measures
from judgelab.studies.ranking.settings import CorrelationSettings


def measure_slug(measure: str) -> str:
    """A measure's name as a path component (``P(rel=2)@10`` -> ``P_rel_2_@10``)."""
    return re.sub(r"[^A-Za-z0-9@.\-]+", "_", measure).strip("_") or "measure"


class Section(StudyPlan):
    """The section's values, as validated (the schema fills in every default)."""

    name = "ranking"

    @property
    def datasets(self) -> list[str]:
        """The datasets the study ranks systems on: the keys of ``ranking.runs``."""
        return list(self.section["runs"])

    def source(self, dataset: str) -> str:
        return self.section["runs"][dataset]["source"]

    def datasets_of(self, source: str) -> list[str]:
        return [d for d in self.datasets if self.source(d) == source]

    @property
    def systems(self) -> dict[str, dict]:
        """The rankers of ``source: systems`` by run name (``ranking.systems``)."""
        return dict(self.section["systems"])

    @property
    def pool_depth(self) -> int:
        return int(self.section["pool_depth"])

    @property
    def candidates(self) -> str:
        """What a system ranks per topic: ``judged`` or ``all`` passages of the table."""
        return self.section["candidates"]

    @property
    def depth(self) -> int:
        """Documents a system returns per topic."""
        return int(self.section["depth"])

    @property
    def fill(self) -> bool:
        return self.section["unjudged"] == "fill"

    @cached_property
    def measures(self) -> list[str]:
        return list(parse_measures(self.section["measures"], key="ranking.measures"))

    @cached_property
    def measure_slugs(self) -> dict[str, str]:
        """Path component -> measure name."""
        out: dict[str, str] = {}
        for i, m in enumerate(self.measures):
            slug = measure_slug(m)
            if slug in out:
                raise InputError(
                    f"the measures {out[slug]!r} and {m!r} share the file name {slug!r}; keep one",
                    key=f"ranking.measures[{i}]",
                )
            out[slug] = m
        return out

    def correlation_settings(self) -> CorrelationSettings:
        """The options of :func:`judgelab.studies.ranking.correlation.correlations`
        (``ranking.correlation``; a tracked param of the correlations jobs)."""
        c = self.section["correlation"]
        return CorrelationSettings(
            k=int(c["top_k"]),
            tau_gap_cutoff=int(c["tau_gap_cutoff"]),
            p=float(c["rbo_p"]),
            n_boot=int(c["n_boot"]),
            seed=int(c["seed"]),
            ci_alpha=float(c["ci_alpha"]),
            sig_alpha=float(c["sig_alpha"]),
            test=str(c["test"]),
            ci_method=str(c["ci_method"]),
        )

    @property
    def template(self) -> str:
        return self.section["template"]

    @property
    def persona(self) -> str:
        """``ranking.persona``, or where it is null (the default) ``default`` when the run has it,
        else the run's first persona (as the perturbation study's)."""
        chosen = self.section["persona"]
        if chosen is not None:
            return chosen
        run = list(self.project.personas)
        return "default" if "default" in run or not run else run[0]

    @property
    def expected_judges(self) -> list[str]:
        """The live judges also scored with their expected grades (``ranking.expected_gain``)."""
        return [str(j) for j in self.section["expected_gain"]]

    @property
    def circularity_enabled(self) -> bool:
        """``ranking.circularity.enabled``: build and rank the judge-built runs."""
        return bool(self.section["circularity"]["enabled"])

    @property
    def circularity_depth(self) -> int:
        """d, the documents per topic re-ordered: ``ranking.circularity.depth``, null =
        :attr:`pool_depth`."""
        depth = self.section["circularity"]["depth"]
        return self.pool_depth if depth is None else int(depth)

    @property
    def ppi_enabled(self) -> bool:
        return bool(self.section["ppi"]["enabled"])

    @property
    def figures_enabled(self) -> bool:
        """``ranking.figures``: the figures per dataset x judge x measure are targets."""
        return bool(self.section["figures"])
