"""The PersonaJudge prompt as data (``resources/prompts/simulation/personajudge.yaml``) and its
rendering: the section 10 template, the round's scale block, demonstrations (section 9) and the
query instance.

Round labels (PersonaJudge section 3.1 and 10): in round 1 a neutral judgment is rating 1 ("no
preference") and a directional one (A or B) rating 2 ("has a preference"); in round 2 prefer A is
rating 1 and prefer B rating 2.

The Base Judge (demonstration type ``base``, 0 shots) has its own template, ``base_judge`` of the
YAML: only the task instruction, the round's scale block and the query instance (PersonaJudge
sections 4.5 and 12), no simulation-agent text and no examples block.

A job's prompt parameter (:meth:`SimulationPrompt.texts_for`) holds only the texts its cell uses;
the others are blank there, and :meth:`SimulationPrompt.from_mapping` with ``partial=True``
accepts blank pieces (a cell that needs one fails when it builds a prompt).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

import yaml

from judgelab.data.resources import resources_dir
from judgelab.data.textfiles import load_yaml, yaml_error
from judgelab.errors import InputError
from judgelab.llm.judging import ANSWER_MODES
from judgelab.studies.simulation.data import DEMO_TYPES, Record

DEFAULT_PROMPT = "simulation/personajudge"
BASE = "base"  #: demonstration type of the Base Judge cells (shots 0)
#: rating number of a stored label in each round (round 2 has no neutral)
ROUND_RATING = {1: {"N": "1", "A": "2", "B": "2"}, 2: {"A": "1", "B": "2"}}
_SLOT = re.compile(r"\{([a-z_]+)\}")
_KEYS = (
    "template",
    "scales",
    "logit_answer",
    "base_judge",
    "demonstration",
    "current_task",
    "telemetry",
    "reasoning",
)


def render(template: str, values: Mapping[str, object]) -> str:
    """Replace ``{name}`` slots in one pass (so text inserted for one slot is never rescanned);
    braces that are not a known slot are left alone."""
    return _SLOT.sub(lambda m: str(values[m.group(1)]) if m.group(1) in values else m.group(0), template)


class BaseJudgeTexts(TypedDict):
    """The Base Judge's own template and its answer-format swap (``base_judge`` of the YAML)."""

    template: str
    logit_answer: Mapping[str, str]


@dataclass(frozen=True)
class SimulationPrompt:
    """The texts of the prompt YAML, checked."""

    template: str
    scales: Mapping[str, Mapping[str, str]]
    logit_answer: Mapping[str, str]
    base_judge: BaseJudgeTexts
    demonstration: str
    current_task: str
    telemetry: str
    reasoning: str
    source: str = ""

    @classmethod
    def load(cls, ref: str = DEFAULT_PROMPT, resources: str | Path | None = None) -> SimulationPrompt:
        """From a YAML path, or ``<study>/<name>`` under ``resources``/prompts (default: the
        workflow's resources folder, :func:`~judgelab.data.resources.resources_dir`)."""
        path = Path(ref)
        if not path.exists():
            path = resources_dir(resources) / "prompts" / f"{ref}.yaml"
        if not path.exists():
            raise InputError(f"no simulation prompt {ref!r} (looked for {path})", key="simulation.prompt")
        try:
            data = load_yaml(path.read_text(encoding="utf-8"))
        except yaml.YAMLError as exc:
            raise yaml_error(exc, path) from None
        if not isinstance(data, dict):
            raise InputError("expected a mapping", path=str(path))
        return cls.from_mapping(data, str(path))

    @classmethod
    def from_mapping(
        cls, data: Mapping, source: str = "<prompt>", *, partial: bool = False
    ) -> SimulationPrompt:
        """The prompt from its YAML mapping, checked. ``partial``: a job's parameter, where the
        pieces its cell does not use are blank ("" - not checked)."""
        missing = [k for k in _KEYS if k not in data]
        if missing:
            raise InputError(f"missing keys {missing}", path=source)
        for k in ("template", "demonstration", "current_task", "telemetry", "reasoning"):
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
        base = data["base_judge"]
        if not isinstance(base, dict) or set(base) != {"template", "logit_answer"}:
            raise InputError("'base_judge' needs exactly 'template' and 'logit_answer'", path=source)
        if not isinstance(base["template"], str):
            raise InputError("'base_judge.template' must be a string", path=source)
        frames = (
            # (name, template, its slots, slots it must not have, its logit_answer, key of that)
            (
                "template",
                data["template"],
                ("{scale}", "{examples}", "{current_task}"),
                (),
                data["logit_answer"],
                "logit_answer",
            ),
            (
                "base_judge.template",
                base["template"],
                ("{scale}", "{current_task}"),
                ("{examples}",),
                base["logit_answer"],
                "base_judge.logit_answer",
            ),
        )
        for name, tpl, slots, banned, la, la_key in frames:
            if (
                not isinstance(la, dict)
                or not isinstance(la.get("replace"), str)
                or not isinstance(la.get("with"), str)
            ):
                raise InputError(f"{la_key!r} needs 'replace' and 'with' strings", path=source)
            if partial and not tpl:
                continue  # not used by the cell whose parameter this is
            for slot in slots:
                if tpl.count(slot) != 1:
                    raise InputError(f"the {name} must contain {slot} exactly once", path=source)
            for slot in banned:
                if slot in tpl:
                    raise InputError(f"the {name} must not contain {slot}", path=source)
            if tpl.count(la["replace"]) != 1:
                raise InputError(f"{la_key}.replace must occur exactly once in the {name}", path=source)
        return cls(
            data["template"],
            scales,
            data["logit_answer"],
            {"template": base["template"], "logit_answer": dict(base["logit_answer"])},
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
        """The template for a prompt kind: the Base Judge's own template or the section 10 one,
        the answer-format sentence swapped for ``answer='logits'``."""
        if answer not in ANSWER_MODES:
            raise InputError(
                f"unknown answer mode {answer!r}; known: {', '.join(ANSWER_MODES)}", key="simulation.answer"
            )
        tpl, la = (
            (self.base_judge["template"], self.base_judge["logit_answer"])
            if base_judge
            else (self.template, self.logit_answer)
        )
        if not tpl:
            raise InputError(
                f"the prompt parameter has no {'base_judge template' if base_judge else 'template'} "
                "(a cell's parameter holds only the texts its cell uses)",
                path=self.source,
            )
        if answer == "logits":
            tpl = tpl.replace(la["replace"], la["with"], 1)
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
        the demonstrations, the query instance; for ``demo_type`` ``base`` (no demonstrations)
        the Base Judge's prompt: the task instruction, the scale block and the query instance."""
        base = demo_type == BASE
        if base and demos:
            raise ValueError("the Base Judge shows no demonstrations")
        if not base and not demos:
            raise ValueError(f"a {demo_type} prompt needs at least one demonstration")
        values = {
            "scale": self.scale(task, round_),
            "current_task": render(self.current_task, self.instance(query)),
        }
        if not base:
            values["examples"] = "\n".join(
                self.demo(i, d, round_, demo_type) for i, d in enumerate(demos, start=1)
            )
        return render(self.frame(base_judge=base, answer=answer), values)

    def texts(self) -> dict:
        """Everything that shapes a prompt (for a job's tracked params)."""
        return {
            "template": self.template,
            "scales": {k: dict(v) for k, v in self.scales.items()},
            "logit_answer": dict(self.logit_answer),
            "base_judge": {
                "template": self.base_judge["template"],
                "logit_answer": dict(self.base_judge["logit_answer"]),
            },
            "demonstration": self.demonstration,
            "current_task": self.current_task,
            "telemetry": self.telemetry,
            "reasoning": self.reasoning,
        }

    def texts_for(self, task: str, demo_type: str) -> dict:
        """The texts one cell's prompts use (a tracked parameter of its job, so that editing a
        piece reruns exactly the cells using it): only ``task``'s scale block; for the Base Judge
        (type ``base``) its own template and no section 10 template or demonstration format, for
        the other types the section 10 template and no Base Judge template; the telemetry and
        reasoning blocks blank where the type shows none. Read back with
        ``from_mapping(..., partial=True)``."""
        self.scale(task, 1)  # the task must have a scale block
        out = self.texts()
        out["scales"] = {task: dict(self.scales[task])}
        blank = {"replace": "", "with": ""}
        if demo_type == BASE:
            out["template"], out["logit_answer"], out["demonstration"] = "", dict(blank), ""
        else:
            out["base_judge"] = {"template": "", "logit_answer": dict(blank)}
        needs = DEMO_TYPES.get(demo_type, ())
        for signal in ("telemetry", "reasoning"):
            if signal not in needs:
                out[signal] = ""
        return out
