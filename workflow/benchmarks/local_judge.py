"""Local judge modes on the bundled sample: naive per-call vs prefix reuse vs label-only decoding.

The embedded model (SmolLM2-135M-Instruct, llama-cpp-python) judges the same pairs (default:
every pair of resources/sample/dl19, persona LA) in each mode, loaded once, with an empty KV
state at the start of each mode and no request cache involved, per template (default
peras/wo_cot, whose answers SmolLM2 hardly ever gives as a label, and peras/w_cot, where about
half parse, so that the label check compares labels):

* ``naive``: every prompt evaluated from its first token (``reuse_prefix: false``), greedy answer
  of up to the template's ``max_tokens``;
* ``reuse``: only the tokens after the prefix shared with the previous prompt are evaluated (the
  default);
* ``label-only``: prefix reuse and ``max_tokens 1``: the label is read from the first answer
  token and the label-token probabilities at that position.

Per mode: calls, CPU and wall seconds, calls per CPU / wall second, prompt tokens sent and
evaluated, answer tokens, evaluated tokens per CPU second. Checked across modes: the same answer
texts (naive vs reuse), the same parsed labels, the largest difference of p0..p3, and that the
label-only answer is the first token of the full answer.

    python workflow/benchmarks/local_judge.py [--dataset resources/sample/dl19] [--persona LA]
        [--template peras/wo_cot --template peras/w_cot] [--threads 1] [--pairs 24]
        [--out results/benchmarks/local_judge.tsv]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from benchlib import (  # first: puts this checkout's judgelab on the path
    ROOT,
    Clock,
    default_out,
    markdown,
    write_tsv,
)

from judgelab.data.prepare import build_trec_table
from judgelab.llm.answers import parse_label
from judgelab.llm.backends.local import LocalBackend
from judgelab.llm.judge import Judge
from judgelab.llm.judging import judgment_requests
from judgelab.llm.personas import load_persona_file
from judgelab.llm.prompts import load_template

COLUMNS = [
    "template",
    "mode",
    "reuse_prefix",
    "max_tokens",
    "calls",
    "cpu_s",
    "wall_s",
    "calls_per_cpu_s",
    "calls_per_wall_s",
    "prompt_tokens",
    "evaluated_tokens",
    "answer_tokens",
    "eval_tokens_per_cpu_s",
    "cpu_speedup_vs_naive",
    "parsed",
    "same_labels_as_naive",
    "max_prob_diff_vs_naive",
    "note",
]

DEFAULT_TEMPLATES = ["peras/wo_cot", "peras/w_cot"]
MODES = {"naive": (False, None), "reuse": (True, None), "label-only": (True, 1)}


def compare_modes(
    backend: LocalBackend, pairs, persona: str, ref: str, template: str, max_tokens: int
) -> list[dict]:
    """The three modes on one template: a row each, with the checks across modes in ``note``."""
    outputs, rows = {}, []
    for mode, (reuse, mode_max) in MODES.items():
        reqs = judgment_requests(
            pairs, Judge("judge", template=template, persona=persona, max_tokens=mode_max or max_tokens)
        )
        backend.reuse_prefix = reuse
        backend.llm.n_tokens = 0  # an empty KV state at the start of each mode
        with Clock() as c:
            out = [backend.complete(r) for r in reqs]
        t = c.timing
        outputs[mode] = out
        evaluated = sum(x.prompt_tokens - x.extra["reused_tokens"] for x in out)
        rows.append(
            {
                "template": ref,
                "mode": mode,
                "reuse_prefix": reuse,
                "max_tokens": reqs[0].max_tokens,
                "calls": len(out),
                "cpu_s": t.cpu,
                "wall_s": t.wall,
                "calls_per_cpu_s": len(out) / t.cpu,
                "calls_per_wall_s": len(out) / t.wall,
                "prompt_tokens": sum(x.prompt_tokens for x in out),
                "evaluated_tokens": evaluated,
                "answer_tokens": sum(x.completion_tokens for x in out),
                "eval_tokens_per_cpu_s": evaluated / t.cpu,
                "parsed": sum(parse_label(x.text) is not None for x in out),
            }
        )
    naive, n = outputs["naive"], len(outputs["naive"])
    labels = {m: [parse_label(x.text) for x in o] for m, o in outputs.items()}
    for r in rows:
        o = outputs[r["mode"]]
        r["cpu_speedup_vs_naive"] = rows[0]["cpu_s"] / r["cpu_s"]
        r["same_labels_as_naive"] = f"{sum(a == b for a, b in zip(labels['naive'], labels[r['mode']]))}/{n}"
        r["max_prob_diff_vs_naive"] = max(
            max(abs(x - y) for x, y in zip(a.label_probs, b.label_probs)) for a, b in zip(naive, o)
        )
    same_text = sum(a.text == b.text for a, b in zip(naive, outputs["reuse"]))
    rows[1]["note"] = f"answer text identical to naive: {same_text}/{n}"
    prefix = sum(a.text.startswith(b.text) for a, b in zip(outputs["reuse"], outputs["label-only"]))
    differ = [
        (a.text, b.text, la, lb)
        for a, b, la, lb in zip(
            outputs["reuse"], outputs["label-only"], labels["reuse"], labels["label-only"]
        )
        if la != lb
    ]
    gained = [d for d in differ if d[2] is None]
    lost = [d for d in differ if d[3] is None]
    rows[2]["note"] = (
        f"answer is the start of the full answer: {prefix}/{n}; label differs from the full "
        f"answer's: {len(differ)} ({len(gained)} where the full answer does not parse, "
        f"{len(lost)} where the first token does not, {len(differ) - len(gained) - len(lost)} "
        "other labels)" + (f", e.g. full {differ[0][0]!r} vs {differ[0][1]!r}" if differ else "")
    )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--dataset",
        default=str(ROOT / "resources" / "sample" / "dl19"),
        help="a folder with qrels.txt, topics.txt, texts.tsv (TREC format)",
    )
    ap.add_argument("--persona", default="LA")
    ap.add_argument(
        "--template",
        action="append",
        default=None,
        help=f"repeatable; default {' and '.join(DEFAULT_TEMPLATES)}",
    )
    ap.add_argument("--max-tokens", type=int, default=8, help="answer bound of naive and reuse")
    ap.add_argument("--threads", type=int, default=1, help="the default config runs 1 thread per job")
    ap.add_argument("--pairs", type=int, default=None, help="the first N pairs (qid, docid order)")
    ap.add_argument("--out", default=str(default_out("local_judge")))
    args = ap.parse_args()

    d = Path(args.dataset)
    pairs = build_trec_table(d.name, d / "qrels.txt", d / "topics.txt", d / "texts.tsv")
    pairs = pairs.sort_values(["qid", "docid"])
    if args.pairs:
        pairs = pairs.head(args.pairs)
    persona = load_persona_file()[args.persona].instruction

    backend = LocalBackend(n_threads=args.threads, n_ctx=2048)
    templates = args.template or DEFAULT_TEMPLATES
    warm = judgment_requests(
        pairs.head(1), Judge("judge", template=load_template(templates[0]), persona=persona, max_tokens=1)
    )
    backend.complete(warm[0])  # model load, outside the timings
    rows = []
    for ref in templates:
        rows += compare_modes(backend, pairs, persona, ref, load_template(ref), args.max_tokens)
    backend.close()
    for r in rows:
        if r["mode"] == "naive":
            r["note"] = json.dumps(
                {"pairs": len(pairs), "persona": args.persona, "threads": args.threads, "dataset": d.name}
            )
    path = write_tsv(rows, COLUMNS, args.out)
    print(markdown(rows, COLUMNS))
    print(f"\nwritten: {path}")


if __name__ == "__main__":
    main()
