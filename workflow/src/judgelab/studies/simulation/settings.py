"""The evaluator simulation's settings values (PersonaJudge), built by its plan (:mod:`.plan`) from
the config and carried whole as rule params into its jobs (:mod:`.jobs`): the selection and split
of an evaluator set, a cell's judge (the model and everything that decides the cascade's
requests), the design of an evaluator set, and the options of the baseline, metric, statistics
and table stages. A stage with one option (the figures' metric) takes it as a plain value."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from judgelab import schema
from judgelab.errors import InputError
from judgelab.llm.judge import Coverage, resolve_answer
from judgelab.llm.judging import request_max_tokens
from judgelab.llm.session import JobContext, LLMSession
from judgelab.params import Settings
from judgelab.studies.simulation.prompt import SimulationPrompt


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
    evaluators: tuple[str, ...] = schema.default_of("simulation.datasets.<name>.evaluators", tuple)
    task: str | None = None
    split: str = schema.default_of("simulation.datasets.<name>.split")
    group_by: str = schema.default_of("simulation.datasets.<name>.group_by")
    balance_neutral: bool = schema.default_of("simulation.datasets.<name>.balance_neutral")
    min_neutral: int = schema.default_of("simulation.min_neutral")


@dataclass(frozen=True)
class CascadeSettings(Settings):
    """What besides the prompt texts and the demonstrations shapes a cell's requests."""

    task: str = schema.default_of(
        "simulation.datasets.<name>.task"
    )  #: scale block (a key of the prompt YAML's ``scales``)
    answer: str = "parse"  #: parse | logits (``auto`` resolved: :meth:`resolve`)
    max_tokens: int = schema.default_of(
        "simulation.max_tokens"
    )  #: answer length bound on the parse path (logits: 1 token)
    seed: int = schema.default_of("simulation.seed")  #: demonstration draws
    min_neutral: int = schema.default_of(
        "simulation.min_neutral"
    )  #: fewer neutral pool labels -> direction-only evaluator

    @classmethod
    def resolve(cls, values: Mapping, model_spec: Mapping | None = None) -> CascadeSettings:
        """Settings from a config mapping; ``answer: auto`` reads the logits of the embedded
        (``local``) backend and parses the text of every other backend."""
        unknown = set(values) - {f.name for f in fields(cls)}
        if unknown:
            raise InputError(f"unknown settings {sorted(unknown)}", key="simulation")
        v = dict(values)
        if "answer" in v:
            v["answer"] = resolve_answer(v["answer"], (model_spec or {}).get("backend"), "simulation.answer")
        for name, low in (("max_tokens", 1), ("min_neutral", 0)):
            if name in v and (isinstance(v[name], bool) or not isinstance(v[name], int) or v[name] < low):
                raise InputError(f"must be an integer >= {low}, got {v[name]!r}", key=f"simulation.{name}")
        return cls(**v)

    def request_max_tokens(self) -> int:
        return request_max_tokens(self.max_tokens, self.answer)


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

    seed: int = schema.default_of("simulation.seed")
    majority_source: str = schema.default_of("simulation.majority_source")


@dataclass(frozen=True)
class MetricSettings(Settings):
    """The metric tables: the accuracy the correlations and the control's scoring use, and the
    seeded draws of Random Selection shown beside its expectation."""

    metric: str = schema.default_of("simulation.metric")
    random_draws: int = schema.default_of("simulation.random_draws")
    seed: int = schema.default_of("simulation.seed")


@dataclass(frozen=True)
class StatsSettings(Settings):
    """The tests: the accuracy they compare, the significance level, the item-level tests'
    random permutations and seed, and the units those tests keep together (``group``, ``item``,
    ``judgment``)."""

    metric: str = schema.default_of("simulation.metric")
    alpha: float = schema.default_of("simulation.alpha")
    permutations: int = schema.default_of("simulation.permutations")
    seed: int = schema.default_of("simulation.seed")
    cluster_by: str = schema.default_of("simulation.cluster_by")


@dataclass(frozen=True)
class TableSettings(Settings):
    """The report tables: the accuracy they report and the significance level of their
    readings."""

    metric: str = schema.default_of("simulation.metric")
    alpha: float = schema.default_of("simulation.alpha")
