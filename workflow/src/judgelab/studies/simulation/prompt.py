"""The PersonaJudge prompt as data (``resources/prompts/simulation/personajudge.yaml``) and its
rendering: the section 10 template, the round's scale block, demonstrations (section 9) and the
query instance.

Round labels (seed 001 section 3.1 and 10): in round 1 a neutral judgment is rating 1 ("no
preference") and a directional one (A or B) rating 2 ("has a preference"); in round 2 prefer A is
rating 1 and prefer B rating 2.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from ...errors import InputError
from ...resources import resources_dir
from .data import DEMO_TYPES, Record

DEFAULT_PROMPT = "simulation/personajudge"
ANSWER_MODES = ("parse", "logits")
#: rating number of a stored label in each round (round 2 has no neutral)
ROUND_RATING = {1: {"N": "1", "A": "2", "B": "2"}, 2: {"A": "1", "B": "2"}}
_SLOT = re.compile(r"\{([a-z_]+)\}")
_KEYS = (
    "template",
    "scales",
    "base_judge_remove",
    "logit_answer",
    "demonstration",
    "current_task",
    "telemetry",
    "reasoning",
)


def render(template: str, values: Mapping[str, object]) -> str:
    """Replace ``{name}`` slots in one pass (so text inserted for one slot is never rescanned);
    braces that are not a known slot are left alone."""
    return _SLOT.sub(lambda m: str(values[m.group(1)]) if m.group(1) in values else m.group(0), template)


@dataclass(frozen=True)
class SimulationPrompt:
    """The texts of the prompt YAML, checked."""

    template: str
    scales: Mapping[str, Mapping[str, str]]
    base_judge_remove: str
    logit_answer: Mapping[str, str]
    demonstration: str
    current_task: str
    telemetry: str
    reasoning: str
    source: str = ""

    @classmethod
    def load(cls, ref: str = DEFAULT_PROMPT, resources: str | Path | None = None) -> SimulationPrompt:
        """From a YAML path, or ``<study>/<name>`` under ``resources``/prompts (default: the
        workflow's resources folder, :func:`~judgelab.resources.resources_dir`)."""
        path = Path(ref)
        if not path.exists():
            path = resources_dir(resources) / "prompts" / f"{ref}.yaml"
        if not path.exists():
            raise InputError(f"no simulation prompt {ref!r} (looked for {path})", key="simulation.prompt")
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            raise InputError(
                f"invalid YAML: {exc}", path=str(path), line=(mark.line + 1) if mark else None
            ) from None
        if not isinstance(data, dict):
            raise InputError("expected a mapping", path=str(path))
        return cls.from_mapping(data, str(path))

    @classmethod
    def from_mapping(cls, data: Mapping, source: str = "<prompt>") -> SimulationPrompt:
        missing = [k for k in _KEYS if k not in data]
        if missing:
            raise InputError(f"missing keys {missing}", path=source)
        for k in ("template", "base_judge_remove", "demonstration", "current_task", "telemetry", "reasoning"):
            if not isinstance(data[k], str):
                raise InputError(f"{k!r} must be a string", path=source)
        scales = data["scales"]
        if (
            not isinstance(scales, dict)
            or not scales
            or any(
                not isinstance(v, dict)
                or not isinstance(v.get("round1"), str)
                or not isinstance(v.get("round2"), str)
                for v in scales.values()
            )
        ):
            raise InputError("'scales' must map each task to its round1 and round2 texts", path=source)
        la = data["logit_answer"]
        if (
            not isinstance(la, dict)
            or not isinstance(la.get("replace"), str)
            or not isinstance(la.get("with"), str)
        ):
            raise InputError("'logit_answer' needs 'replace' and 'with' strings", path=source)
        tpl = data["template"]
        for slot in ("{scale}", "{examples}", "{current_task}"):
            if tpl.count(slot) != 1:
                raise InputError(f"the template must contain {slot} exactly once", path=source)
        for what, text in (
            ("base_judge_remove", data["base_judge_remove"]),
            ("logit_answer.replace", la["replace"]),
        ):
            if tpl.count(text) != 1:
                raise InputError(f"{what} must occur exactly once in the template", path=source)
        return cls(
            tpl,
            scales,
            data["base_judge_remove"],
            la,
            data["demonstration"],
            data["current_task"],
            data["telemetry"],
            data["reasoning"],
            source,
        )

    # -- pieces ----------------------------------------------------------------------------
    def scale(self, task: str, round_: int) -> str:
        if task not in self.scales:
            raise InputError(
                f"no scale block for task {task!r} in {self.source}; known: {sorted(self.scales)}",
                key="simulation.task",
            )
        return self.scales[task][f"round{round_}"]

    def frame(self, *, base_judge: bool, answer: str) -> str:
        """The template for a prompt kind: the examples section cut for the Base Judge, the
        answer-format sentence swapped for ``answer='logits'``."""
        if answer not in ANSWER_MODES:
            raise InputError(
                f"unknown answer mode {answer!r}; known: {', '.join(ANSWER_MODES)}", key="simulation.answer"
            )
        tpl = self.template
        if base_judge:
            tpl = tpl.replace(self.base_judge_remove, "", 1)
        if answer == "logits":
            tpl = tpl.replace(self.logit_answer["replace"], self.logit_answer["with"], 1)
        return tpl

    def instance(self, rec: Record) -> dict[str, str]:
        return {"context": rec.context, "response_a": rec.response_a, "response_b": rec.response_b}

    def demo(self, n: int, rec: Record, round_: int, demo_type: str) -> str:
        """Demonstration number ``n`` of ``rec`` for a round, with the signals of ``demo_type``."""
        needs = DEMO_TYPES[demo_type]
        signals = ""
        if "telemetry" in needs:
            if not rec.telemetry:
                raise InputError(f"item {rec.item!r} of {rec.evaluator!r} has no telemetry for {demo_type}")
            events = "\n".join(json.dumps(e.to_json(), ensure_ascii=False) for e in rec.telemetry)
            signals += render(self.telemetry, {"events": events})
        if "reasoning" in needs:
            if not rec.reasoning:
                raise InputError(f"item {rec.item!r} of {rec.evaluator!r} has no reasoning for {demo_type}")
            sections = "\n".join(f"{s.section}: {s.content}" for s in rec.reasoning)
            signals += render(self.reasoning, {"sections": sections})
        return render(
            self.demonstration,
            {"n": n, **self.instance(rec), "signals": signals, "label": ROUND_RATING[round_][rec.label]},
        )

    def build(
        self, query: Record, demos: Sequence[Record], *, round_: int, task: str, demo_type: str, answer: str
    ) -> str:
        """The prompt P^r(e, x) of section 3.1: instruction header with the round's scale block,
        the demonstrations, the query instance. No demonstrations = the Base Judge prompt."""
        examples = "\n".join(self.demo(i, d, round_, demo_type) for i, d in enumerate(demos, start=1))
        return render(
            self.frame(base_judge=not demos, answer=answer),
            {
                "scale": self.scale(task, round_),
                "examples": examples,
                "current_task": render(self.current_task, self.instance(query)),
            },
        )

    def texts(self) -> dict:
        """Everything that shapes a prompt (for a job's tracked params)."""
        return {
            "template": self.template,
            "scales": dict(self.scales),
            "base_judge_remove": self.base_judge_remove,
            "logit_answer": dict(self.logit_answer),
            "demonstration": self.demonstration,
            "current_task": self.current_task,
            "telemetry": self.telemetry,
            "reasoning": self.reasoning,
        }

    def texts_for(self, task: str, demo_type: str) -> dict:
        """The texts one cell's prompts use (a tracked parameter of its job, so that editing a
        piece reruns exactly the cells using it): only ``task``'s scale block; the demonstration
        format blank for the Base Judge (type ``base``, no demonstrations); the telemetry and
        reasoning blocks blank where the type shows none."""
        self.scale(task, 1)  # the task must have a scale block
        out = self.texts()
        out["scales"] = {task: dict(self.scales[task])}
        needs = DEMO_TYPES.get(demo_type, ())
        if demo_type not in DEMO_TYPES:
            out["demonstration"] = ""
        for signal in ("telemetry", "reasoning"):
            if signal not in needs:
                out[signal] = ""
        return out
