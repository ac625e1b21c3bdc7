"""The perturbation study's settings values ("When LLM Judges Inflate Scores", section 3), built by
its plan (:mod:`.plan`) from the config and carried whole as rule params into its jobs
(:mod:`.jobs`): the judge of the re-judging (:class:`OriginalJudge`: a
:class:`~judgelab.llm.judge.Judge` and how its original labels were made), the models that write
from one prompt (:class:`Writer`: the rewriter of a variant, the meaning checker;
:class:`SemWriter`: the SEM sentence writer), the sample's draw (:class:`Sampling`), an insertion
(:class:`Insertion`), the pairs a re-judge job judges (:class:`Selection`) and the figures
(:class:`TransitionFigure`, :class:`InsertionFigure`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, TypeVar

from judgelab import schema
from judgelab.llm.judge import Judge
from judgelab.llm.session import JobContext, LLMSession
from judgelab.params import Settings

W = TypeVar("W", bound="Writer")

#: the sources of the original labels (``perturbations.original``)
ORIGINALS = ("peras", "overrating")


@dataclass(frozen=True)
class OriginalJudge(Judge):
    """A judge as its original labels were made, and so as it re-judges a variant: the
    :class:`~judgelab.llm.judge.Judge` of the original judge job and ``original``, which job that
    was: ``peras`` - the PERAS judge job of the study's template and persona (persona ||
    template, the label read by ``answer``); ``overrating`` - the overrating study's graded
    pointwise job (its template, labels and bound; no persona, the label parsed where it is
    generated: ``persona`` "" and ``answer`` ``parse``). Everything that decides its requests, so
    an unchanged passage's request is the original's (a cache hit)."""

    original: str = schema.default_of("perturbations.original")

    @classmethod
    def of(cls, original: str, judge: Judge) -> OriginalJudge:
        """``judge`` (the original study's judge) re-judging as ``original`` judged."""
        return cls(original=original, **{f.name: getattr(judge, f.name) for f in fields(Judge)})

    # Judge's own (typed as returning a Judge): the same judge, so the same class


@dataclass(frozen=True)
class Writer(Settings):
    """A model answering one prompt per item: the rewriter of one variant (its rewrite prompt)
    or the meaning checker (the meaning-check prompt). ``model``: its key in ``models`` ("": no
    model); ``spec``: its entry (the keys that change no answer left out); ``template``: the
    prompt's text; ``max_tokens``: the answer bound."""

    model: str
    spec: Mapping[str, Any] = field(default_factory=dict)
    template: str = ""
    max_tokens: int = 16

    def __post_init__(self) -> None:
        object.__setattr__(self, "spec", dict(self.spec))
        object.__setattr__(self, "max_tokens", int(self.max_tokens))

    def but(self: W, **changes: Any) -> W:
        """The same writer with some settings changed (e.g. another prompt)."""
        return replace(self, **changes)

    def session(self, context: JobContext) -> LLMSession:
        """The model session of a job of this writer (backend, request cache, usage line)."""
        return context.session(dict(self.spec), self.model or None)


@dataclass(frozen=True)
class SemWriter(Writer):
    """The SEM writer: the rewriter (``model`` "" when there is none: every sentence then comes
    from the reviewed file), the SEM prompt, its bound, and how often a sentence that fails the
    check in code is requested again (``max_attempts``)."""

    max_attempts: int = 1

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "max_attempts", int(self.max_attempts))


@dataclass(frozen=True)
class Sampling(Settings):
    """A judge's sample: per query at most ``per_label`` passages per label it predicted, drawn
    with ``seed``."""

    per_label: int
    seed: int


@dataclass(frozen=True)
class Insertion(Settings):
    """One insertion variant (``SEM``, ``LEX``, ``QRY``): the stopword list that picks the query
    terms (sorted) and, for LEX, the paper's template sentence (``template``; SEM's prompt is its
    :class:`SemWriter`'s, QRY has none)."""

    variant: str
    stopwords: tuple[str, ...] = ()
    template: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "stopwords", tuple(sorted(str(w) for w in self.stopwords)))

    @property
    def words(self) -> frozenset[str]:
        return frozenset(self.stopwords)


@dataclass(frozen=True)
class Selection(Settings):
    """The pairs a re-judge job judges: the judge's own sampled pairs with a usable ``variant``
    (a kept rewrite, a valid insertion), with ``rewrite_filter`` ``all_variants`` for a rewrite
    variant only those kept by every rewrite variant (``per_variant``: the variant's own)."""

    variant: str
    rewrite_filter: str = schema.default_of("perturbations.rewrite_filter")


@dataclass(frozen=True)
class TransitionFigure(Settings):
    """Figure 1 of one judge: the dataset(s) named in the title, the judge's key and display name,
    and the rewrite variants (one panel each, in order)."""

    title: str
    judge: str
    display: str
    variants: tuple[str, ...]


@dataclass(frozen=True)
class InsertionFigure(Settings):
    """Figure 3: the dataset(s) named in the title, the insertion variants (in order) and the
    judges' display names by key."""

    title: str
    variants: tuple[str, ...]
    names: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class AttackSampling(Settings):
    """The attacked passages (:func:`~.attacks.attack_candidates`): per query at most
    ``per_label`` of the pairs the assessors graded with one of ``grades``, drawn with ``seed``,
    and with ``other_topics`` as many passages of other topics."""

    grades: tuple[int, ...]
    per_label: int
    seed: int
    other_topics: bool = schema.default_of("perturbations.attacks.other_topics")

    def __post_init__(self) -> None:
        object.__setattr__(self, "grades", tuple(sorted(int(g) for g in self.grades)))


@dataclass(frozen=True)
class Attack(Settings):
    """One attack (:mod:`.attacks`): ``name`` (its name in the paths and tables: ``stuff``,
    ``inject_<injection>``; ``none`` for the clean judgment), ``kind`` (``STUFF`` | ``INJECT`` |
    "" for the clean judgment), the ``positions`` it is applied at, INJECT's ``sentence``, and
    STUFF's ``repeat`` count and the stopword list that picks the query terms (sorted)."""

    name: str
    kind: str = ""
    positions: tuple[str, ...] = ()
    sentence: str = ""
    repeat: int = schema.default_of("perturbations.attacks.stuff_repeat")
    stopwords: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "stopwords", tuple(sorted(str(w) for w in self.stopwords)))
        object.__setattr__(self, "repeat", int(self.repeat))

    @property
    def words(self) -> frozenset[str]:
        return frozenset(self.stopwords)


@dataclass(frozen=True)
class AttackMeasure(Settings):
    """How the attack table counts: a label >= ``relevant`` is judged relevant; the paired
    bootstrap over queries (``n_boot`` resamples, ``seed``, a ``1 - alpha`` interval)."""

    relevant: int
    n_boot: int
    seed: int
    alpha: float = schema.default_of("perturbations.attacks.alpha")


@dataclass(frozen=True)
class AttackFigure(Settings):
    """The attack figure: the dataset named in the title and the judges' display names by key."""

    title: str
    names: Mapping[str, str] = field(default_factory=dict)
