"""The evaluator simulation's settings values (PersonaJudge), built by its plan (:mod:`.plan`) from
the config and carried whole as rule params into its jobs (:mod:`.jobs`): the selection and split
of an evaluator set, a cell's judge (the model and everything that decides the cascade's
requests), the design of an evaluator set, and the options of the baseline, metric, statistics
and table stages. A stage with one option (the figures' metric) takes it as a plain value."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from judgelab.errors import InputError
from judgelab.llm.backends import capabilities
from judgelab.llm.judge import Coverage
from judgelab.llm.session import JobContext, LLMSession
from judgelab.params import Settings
from judgelab.studies.simulation.baselines import RANDOM_DRAWS
from judgelab.studies.simulation.prompt import ANSWER_MODES, SimulationPrompt


@dataclass(frozen=True)
class Selection(Settings):
    """What the prepare job does with an evaluator set's file: its format, the evaluators kept
    (empty: all), the task whose records it keeps (None: every record), the per-evaluator pool and
    validation sizes, the split (mode, leakage groups, neutral interleaving, seed), and the
    neutral labels below which an evaluator is simulated direction-only (its summary's flag)."""

    format: str
    pool: int
    validation: int
    seed: int
    evaluators: tuple[str, ...] = ()
    task: str | None = None
    split: str = "coordinated"
    group_by: str = "context"
    balance_neutral: bool = True
    min_neutral: int = 2


@dataclass(frozen=True)
class CascadeSettings(Settings):
    """What besides the prompt texts and the demonstrations shapes a cell's requests."""

    task: str = "helpfulness"  #: scale block (a key of the prompt YAML's ``scales``)
    answer: str = "parse"  #: parse | logits
    max_tokens: int = 64  #: answer length bound on the parse path (logits: 1 token)
    seed: int = 0  #: demonstration draws
    min_neutral: int = 2  #: fewer neutral pool labels -> direction-only evaluator

    @classmethod
    def resolve(cls, values: Mapping, model_spec: Mapping | None = None) -> CascadeSettings:
        """Settings from a config mapping; ``answer: auto`` reads the logits of the embedded
        (``local``) backend and parses the text of every other backend."""
        unknown = set(values) - {f.name for f in fields(cls)}
        if unknown:
            raise InputError(f"unknown settings {sorted(unknown)}", key="simulation")
        v = dict(values)
        if v.get("answer", "parse") == "auto":
            v["answer"] = (
                "logits" if capabilities((model_spec or {}).get("backend")).reads_logits else "parse"
            )
        if v.get("answer", "parse") not in ANSWER_MODES:
            raise InputError(
                f"unknown answer mode {v['answer']!r}; known: auto, {', '.join(ANSWER_MODES)}",
                key="simulation.answer",
            )
        for name, low in (("max_tokens", 1), ("min_neutral", 0)):
            if name in v and (isinstance(v[name], bool) or not isinstance(v[name], int) or v[name] < low):
                raise InputError(f"must be an integer >= {low}, got {v[name]!r}", key=f"simulation.{name}")
        return cls(**v)

    def request_max_tokens(self) -> int:
        return 1 if self.answer == "logits" else self.max_tokens


@dataclass(frozen=True)
class CascadeJudge(Settings):
    """The judge of one simulation cell's prediction job (a preference judge run as the two-round
    cascade, not a pointwise relevance judge): ``model``, the model's key in ``models`` (errors
    name ``models.<model>.…``); ``spec``, its entry (the keys that change no answer left out);
    ``prompt``, the texts the cell's prompts use (:meth:`SimulationPrompt.texts_for` of the set's
    task and the cell's demonstration type: the others blank); ``cascade``, the task, the answer
    reading, the answer bound, the demonstration seed and the direction-only threshold;
    ``coverage``, the job's coverage floor (None: no check). The cell's demonstration type and
    shot count are the job's wildcards."""

    model: str
    spec: Mapping[str, Any] = field(default_factory=dict)
    prompt: Mapping[str, Any] = field(default_factory=dict)
    cascade: CascadeSettings = field(default_factory=CascadeSettings)
    coverage: Coverage | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "spec", dict(self.spec))
        object.__setattr__(self, "prompt", dict(self.prompt))

    @property
    def backend(self) -> str | None:
        return self.spec.get("backend")

    def resolved(self) -> CascadeJudge:
        """The judge with its cascade settings checked and ``answer: auto`` resolved for its
        model (logits for the embedded model, parse for API models); resolved settings stay."""
        return replace(self, cascade=CascadeSettings.resolve(self.cascade.to_json(), self.spec))

    def but(self, **changes: Any) -> CascadeJudge:
        """The same judge with some settings changed (e.g. another model entry)."""
        return replace(self, **changes)

    def simulation_prompt(self) -> SimulationPrompt:
        """The prompt of :attr:`prompt` (blank pieces allowed: a cell uses only some)."""
        return SimulationPrompt.from_mapping(self.prompt, "<prompt parameter>", partial=True)

    def session(self, context: JobContext) -> LLMSession:
        """The model session of a job of this judge (backend, request cache, usage line)."""
        return context.session(dict(self.spec), self.model)


@dataclass(frozen=True)
class Design(Settings):
    """An evaluator set's design: its cells (model, demo_type, shots), in the order of the
    metrics job's prediction tables, and the demonstration types its data cannot support, with
    the reason."""

    cells: tuple[Mapping[str, Any], ...] = ()
    skipped: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class BaselineSettings(Settings):
    """The reference predictors: Random Selection's seed, and the labels the majorities count
    (``all`` or ``pool``)."""

    seed: int = 0
    majority_source: str = "all"


@dataclass(frozen=True)
class MetricSettings(Settings):
    """The metric tables: the accuracy the correlations and the control's scoring use, and the
    seeded draws of Random Selection shown beside its expectation."""

    metric: str = "accuracy"
    random_draws: int = RANDOM_DRAWS
    seed: int = 0


@dataclass(frozen=True)
class StatsSettings(Settings):
    """The tests: the accuracy they compare, the significance level, the item-level tests'
    random permutations and seed, and the units those tests keep together (``group``, ``item``,
    ``judgment``)."""

    metric: str = "accuracy"
    alpha: float = 0.05
    permutations: int = 10_000
    seed: int = 0
    cluster_by: str = "group"


@dataclass(frozen=True)
class TableSettings(Settings):
    """The report tables: the accuracy they report and the significance level of their
    readings."""

    metric: str = "accuracy"
    alpha: float = 0.05
