"""The ranking study's settings values, built by its plan (:mod:`.plan`) from the config and carried
whole as rule params into its jobs (:mod:`.jobs`): one system's run, a dataset's pool, what a run
is scored under, what a dataset's correlations compare, the correlation statistics' options and
one figure's comparison. A live judge's settings are a :class:`judgelab.llm.judge.Judge` (PERAS's
judge of the same model, template and persona), an imported judge's reading a
:class:`judgelab.data.imported.ImportReading`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from judgelab import schema
from judgelab.params import Settings


def _tuples(rows: Any) -> tuple[tuple[str, ...], ...]:
    """Rows of names (lists from JSON) as tuples of str."""
    return tuple(tuple(str(x) for x in row) for row in rows)


def _names(names: Any) -> tuple[str, ...]:
    return tuple(str(x) for x in names)


def _without_empty(fields: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    """``fields`` less ``names``: fields added for judges that give scores, left out of a param
    where there is none so that the params of earlier runs stay as they were."""
    return {k: v for k, v in fields.items() if k not in names}


def _run_files(run_names: tuple[str, ...], runs: Any) -> dict[str, str]:
    """Run name -> run file: a job's run files ``runs`` in the order of ``run_names``."""
    paths = [str(p) for p in runs]
    if len(run_names) != len(paths):
        raise ValueError(f"{len(run_names)} run names for {len(paths)} run files")
    return dict(zip(run_names, paths))


@dataclass(frozen=True)
class System(Settings):
    """One of the workflow's own retrieval systems (``source: systems``): the run's name (its tag
    field), the ranker's entry of ``ranking.systems`` (``kind`` and its parameters), what it ranks
    per topic (``candidates``: ``judged`` or ``all``) and how many documents per topic it returns
    (``depth``)."""

    name: str
    spec: Mapping[str, Any] = field(default_factory=dict)
    candidates: str = schema.default_of("ranking.candidates")
    depth: int = schema.default_of("ranking.depth")

    def __post_init__(self) -> None:
        object.__setattr__(self, "spec", dict(self.spec))
        object.__setattr__(self, "depth", int(self.depth))


@dataclass(frozen=True)
class Pooling(Settings):
    """A dataset's pool: the names of its runs, in the order of the run files a job is given, and
    the depth (every run's top ``depth`` over the dataset's topics)."""

    run_names: tuple[str, ...]
    depth: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "run_names", _names(self.run_names))
        object.__setattr__(self, "depth", int(self.depth))

    def files(self, runs: Any) -> dict[str, str]:
        """Run name -> run file of the job's run files ``runs`` (in the order of
        :attr:`run_names`)."""
        return _run_files(self.run_names, runs)


@dataclass(frozen=True)
class Scoring(Settings):
    """What a dataset's runs are scored under: every qrels as (name, kind, judge) - kind ``human``
    (the dataset table's grades), ``judge`` (the judge's labels), ``filled`` (the human grades,
    holes filled with the judge's labels), ``expected`` (the judge's expected grades as gains) or
    ``scores`` (a judge that gives scores: its scores as gains) -, the dataset's judges in the
    order of their label files, the measures (ir-measures names) and the names of the runs, in
    the order of the run files a job is given."""

    qrels: tuple[tuple[str, str, str], ...]
    judges: tuple[str, ...]
    measures: tuple[str, ...]
    run_names: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "qrels", _tuples(self.qrels))
        object.__setattr__(self, "judges", _names(self.judges))
        object.__setattr__(self, "measures", _names(self.measures))
        object.__setattr__(self, "run_names", _names(self.run_names))

    def files(self, runs: Any) -> dict[str, str]:
        """Run name -> run file of the job's run files ``runs`` (in the order of
        :attr:`run_names`)."""
        return _run_files(self.run_names, runs)


@dataclass(frozen=True)
class JudgeCost(Settings):
    """What a judge's labels cost (:func:`judgelab.llm.pricing.judgment_cost`): the judge, whether
    it is imported (no call), its backend, its prices (input, output, batch factor: USD per
    million tokens; empty: none listed), whether it runs as a batch, and the template and persona
    its requests use (the cost figure's point label); a committee's ``members``: its cost is
    theirs, summed."""

    judge: str
    imported: bool = False
    backend: str = ""
    prices: tuple[float, ...] = ()
    batch: bool = schema.default_of("models.<name>.batch")
    template: str = ""
    persona: str = ""
    members: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "prices", tuple(float(x) for x in self.prices))
        object.__setattr__(self, "members", tuple(str(m) for m in self.members))


@dataclass(frozen=True)
class Comparisons(Settings):
    """What a dataset's correlations job compares: the dataset's name, its judges in the order of
    their label files, each compared judge with the qrels its system ranking is compared with
    (``references``: (judge, reference) pairs) and the measures; the judges that give scores, not
    labels, each as (judge, low, high) (``scores``: their agreement on the pool is
    :func:`judgelab.studies.ranking.pool.score_agreement`'s) and the map their scores take onto
    the grades before Krippendorff's alpha (``score_alpha``: ``linear``; ``""``: none, alpha n/a);
    whether each judge's mean-difference figure is drawn (``figures``: ``ranking.figures``)."""

    dataset: str
    judges: tuple[str, ...]
    references: tuple[tuple[str, str], ...]
    measures: tuple[str, ...]
    costs: tuple[JudgeCost, ...] = ()
    member_costs: tuple[JudgeCost, ...] = ()
    scores: tuple[tuple[Any, ...], ...] = ()
    score_alpha: str = ""
    figures: bool = schema.default_of("ranking.figures")

    def __post_init__(self) -> None:
        object.__setattr__(self, "judges", _names(self.judges))
        object.__setattr__(self, "references", _tuples(self.references))
        object.__setattr__(self, "measures", _names(self.measures))
        for name in ("costs", "member_costs"):
            object.__setattr__(
                self,
                name,
                tuple(
                    c if isinstance(c, JudgeCost) else JudgeCost.from_param(c) for c in getattr(self, name)
                ),
            )
        object.__setattr__(
            self, "scores", tuple((str(j), float(low), float(high)) for j, low, high in self.scores)
        )

    @property
    def score_ranges(self) -> dict[str, tuple[float, float]]:
        """Judge -> (low, high) of the judges that give scores."""
        return {j: (low, high) for j, low, high in self.scores}

    def to_json(self) -> dict[str, Any]:
        """The fields; ``scores`` and ``score_alpha`` only with a judge that gives scores, so the
        param of a dataset without one is the one it had before (its job does not rerun)."""
        return _without_empty(super().to_json(), ("scores", "score_alpha") if not self.scores else ())


@dataclass(frozen=True)
class CorrelationSettings(Settings):
    """The options of the rank correlations (``ranking.correlation``, see
    :func:`judgelab.studies.ranking.correlation.correlations`): ``k`` the human top k of the top-k
    tau (``top_k``), ``tau_gap_cutoff`` the reference's top k of tau_gap@k (``tau_gap_cutoff``), ``p`` RBO's persistence (``rbo_p``), the topic bootstrap's ``n_boot``
    resamples, ``seed``, interval level ``1 - ci_alpha`` and ``ci_method`` (``bca`` or
    ``percentile``), and the paired ``test`` (``t``, ``wilcoxon``, ``sign``) of the significance
    decisions at level ``sig_alpha``."""

    k: int = schema.default_of("ranking.correlation.top_k")
    tau_gap_cutoff: int = schema.default_of("ranking.correlation.tau_gap_cutoff")
    p: float = schema.default_of("ranking.correlation.rbo_p")
    n_boot: int = schema.default_of("ranking.correlation.n_boot")
    seed: int = schema.default_of("ranking.correlation.seed")
    ci_alpha: float = schema.default_of("ranking.correlation.ci_alpha")
    sig_alpha: float = schema.default_of("ranking.correlation.sig_alpha")
    test: str = schema.default_of("ranking.correlation.test")
    ci_method: str = schema.default_of("ranking.correlation.ci_method")


@dataclass(frozen=True)
class Figure(Settings):
    """The comparison one figure job draws: the dataset, the judge, the qrels it is compared with
    (``reference``) and the measure (its ir-measures name)."""

    dataset: str
    judge: str
    reference: str
    measure: str


@dataclass(frozen=True)
class Circularity(Settings):
    """The runs a dataset's judges build (``ranking.circularity``, see
    :mod:`judgelab.studies.ranking.circularity`): the dataset's name, the base run (``""``: the
    run the human qrels score highest on the first measure), the depth re-ordered, each judge
    with the qrels its system ranking is compared with (``references``: (judge, reference)
    pairs, as :class:`Comparisons`), the measures, the live judges whose labels of the base
    run come from their circularity labelling job (``labelled``: ``depth`` > the pool depth; the
    others' from the pool), and the judges that give scores (``scored``: their run re-ordered by
    the score instead of a label)."""

    dataset: str
    base: str
    depth: int
    references: tuple[tuple[str, str], ...]
    measures: tuple[str, ...]
    labelled: tuple[str, ...] = ()
    scored: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "depth", int(self.depth))
        object.__setattr__(self, "references", _tuples(self.references))
        object.__setattr__(self, "measures", _names(self.measures))
        object.__setattr__(self, "labelled", tuple(str(m) for m in self.labelled))
        object.__setattr__(self, "scored", tuple(str(m) for m in self.scored))

    def to_json(self) -> dict[str, Any]:
        """The fields; ``scored`` only with a judge that gives scores (an unchanged param, no
        rerun, for a dataset without one)."""
        return _without_empty(super().to_json(), () if self.scored else ("scored",))


@dataclass(frozen=True)
class CircularityFigure(Settings):
    """The comparison one circularity figure draws: the dataset, the judge, its reference and the
    measure (its ir-measures name)."""

    dataset: str
    judge: str
    reference: str
    measure: str


@dataclass(frozen=True)
class PPISettings(Settings):
    """The PPI job's settings (``ranking.ppi``): per dataset its (judge, reference) comparisons,
    the measures, the numbers of human-judged topics ``n``, the seeded ``draws``, the intervals'
    ``alpha`` and the paired test (``test`` at ``sig_alpha``) that decides which pairs the
    reference separates."""

    comparisons: tuple[tuple[str, str, str], ...] = ()
    measures: tuple[str, ...] = ()
    n: tuple[int, ...] = schema.default_of("ranking.ppi.n", tuple)
    draws: int = schema.default_of("ranking.ppi.draws")
    seed: int = schema.default_of("ranking.ppi.seed")
    alpha: float = schema.default_of("ranking.ppi.alpha")
    test: str = schema.default_of("ranking.correlation.test")
    sig_alpha: float = schema.default_of("ranking.correlation.sig_alpha")

    def __post_init__(self) -> None:
        object.__setattr__(self, "comparisons", tuple(tuple(str(x) for x in c) for c in self.comparisons))
        object.__setattr__(self, "measures", tuple(str(m) for m in self.measures))
        object.__setattr__(self, "n", tuple(int(x) for x in self.n))


@dataclass(frozen=True)
class RepeatTaus(Settings):
    """What a dataset's repeats table compares (``peras.repeats`` above 1): the dataset's name, the
    repeated live judges in the order of their repeats files, each with the qrels its system
    ranking is compared with (``references``: (judge, reference) pairs, as :class:`Comparisons`),
    the measures, the run names (in the order of the run files a job is given) and k
    (``repeats``)."""

    dataset: str
    judges: tuple[str, ...]
    references: tuple[tuple[str, str], ...]
    measures: tuple[str, ...]
    run_names: tuple[str, ...]
    repeats: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "judges", _names(self.judges))
        object.__setattr__(self, "references", _tuples(self.references))
        object.__setattr__(self, "measures", _names(self.measures))
        object.__setattr__(self, "run_names", _names(self.run_names))
        object.__setattr__(self, "repeats", int(self.repeats))

    def files(self, runs: Any) -> dict[str, str]:
        """Run name -> run file of the job's run files ``runs`` (in the order of
        :attr:`run_names`)."""
        return _run_files(self.run_names, runs)


@dataclass(frozen=True)
class AnnotatedEstimate(Settings):
    """The estimate of a dataset's systems' scores from the labels people collected
    (``ranking.annotated.<dataset>``; :mod:`judgelab.studies.ranking.annotated`): the dataset, the
    judges whose labels cover every topic (in the order of the comparisons), the measures, the
    names of the runs in the order of the run files the job is given, and the intervals' ``alpha``
    (``ranking.ppi.alpha``)."""

    dataset: str
    judges: tuple[str, ...]
    measures: tuple[str, ...]
    run_names: tuple[str, ...]
    alpha: float = schema.default_of("ranking.ppi.alpha")

    def __post_init__(self) -> None:
        object.__setattr__(self, "judges", _names(self.judges))
        object.__setattr__(self, "measures", _names(self.measures))
        object.__setattr__(self, "run_names", _names(self.run_names))
        object.__setattr__(self, "alpha", float(self.alpha))

    def files(self, runs: Any) -> dict[str, str]:
        """Run name -> run file of the job's run files ``runs`` (in the order of
        :attr:`run_names`)."""
        return _run_files(self.run_names, runs)
