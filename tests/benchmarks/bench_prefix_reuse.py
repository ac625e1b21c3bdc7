"""Benchmark: naive per-call judging vs. reuse of the shared persona+instruction prefix.

Runs the embedded model on the same pairs twice (no request cache involved) and reports
judgments/s for both, their ratio, whether the labels agree and the largest difference of the
label probabilities. Usage:

    python tests/benchmarks/bench_prefix_reuse.py [--dataset resources/sample/dl19] [--threads 2]
        [--persona LA] [--template peras/wo_cot] [--max-tokens 8] [--pairs 24]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from judgelab.backends.local import LocalBackend
from judgelab.datasets import build_trec_table
from judgelab.judging import judgment_requests
from judgelab.personas import load_persona_file
from judgelab.prompts import load_template, parse_label

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", default=str(ROOT / "resources" / "sample" / "dl19"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--persona", default="LA")
    ap.add_argument("--template", default="peras/wo_cot")
    ap.add_argument("--max-tokens", type=int, default=8)
    ap.add_argument("--pairs", type=int, default=24)
    args = ap.parse_args()

    d = Path(args.dataset)
    pairs = build_trec_table(d.name, d / "qrels.txt", d / "topics.txt", d / "texts.tsv")
    pairs = pairs.sort_values(["qid", "docid"]).head(args.pairs)
    persona = load_persona_file()[args.persona].instruction
    reqs = judgment_requests(pairs, persona, load_template(args.template), max_tokens=args.max_tokens)

    backend = LocalBackend(n_threads=args.threads, n_ctx=2048)
    backend.complete(reqs[0])  # load the model outside the timings
    results = {}
    for mode, reuse in (("naive", False), ("reuse", True)):
        backend.reuse_prefix = reuse
        backend.llm.n_tokens = 0  # start each mode from an empty KV cache
        t0 = time.perf_counter()
        out = [backend.complete(r) for r in reqs]
        dt = time.perf_counter() - t0
        results[mode] = {"seconds": round(dt, 2), "judgments_per_s": round(len(reqs) / dt, 3),
                         "mean_prompt_tokens": sum(c.prompt_tokens for c in out) / len(out),
                         "mean_reused_tokens": sum(c.extra["reused_tokens"] for c in out) / len(out),
                         "outputs": out}
    naive, reuse = results["naive"].pop("outputs"), results["reuse"].pop("outputs")
    report = {
        "pairs": len(reqs), "threads": args.threads, "persona": args.persona,
        "template": args.template, "max_tokens": args.max_tokens, **results,
        "speedup": round(results["naive"]["seconds"] / results["reuse"]["seconds"], 2),
        "same_text": all(a.text == b.text for a, b in zip(naive, reuse)),
        "same_labels": all(parse_label(a.text) == parse_label(b.text) for a, b in zip(naive, reuse)),
        "max_label_prob_diff": max(max(abs(x - y) for x, y in zip(a.label_probs, b.label_probs))
                                   for a, b in zip(naive, reuse)),
    }
    print(json.dumps(report, indent=2))
    backend.close()


if __name__ == "__main__":
    main()
