"""llama-cpp-python's OpenAI-compatible server, loading models as the local backend does.

``python -m judgelab.llm.llama_server --model FILE.gguf ...`` takes ``python -m llama_cpp.server``'s
arguments and runs that server, with one difference: a build of llama.cpp that has AMX kernels
loads the model without them (:mod:`judgelab.llm.backends.native`; they die at the first token on
some machines). ``JUDGELAB_LLAMA_AMX=1`` in the environment keeps them, as ``amx: true`` does for a
local model. ``profiles/vllm/serve.sh --engine llamacpp`` and the tests start the server this way.
"""

from __future__ import annotations

import os

from judgelab.llm.backends import native


def main() -> None:
    from llama_cpp.server.__main__ import main as serve

    with native.model_params(native.load_fields(os.environ.get("JUDGELAB_LLAMA_AMX") == "1")):
        serve()


if __name__ == "__main__":
    main()
