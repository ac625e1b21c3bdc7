#!/usr/bin/env bash
# Serve a judge model over the OpenAI-compatible API and write its URL to a file once it answers.
#
#   profiles/vllm/serve.sh --model meta-llama/Llama-3.2-3B-Instruct --url-file endpoints/llama.url
#   profiles/vllm/serve.sh --engine llamacpp --model /models/x.gguf --alias x --url-file x.url
#
# --engine vllm (default) runs `vllm serve MODEL` (a GPU host; under SLURM see serve.sbatch);
# --engine llamacpp runs llama-cpp-python's server on a GGUF (the same protocol, on a CPU: what the
# tests use). The script stays in the foreground as long as the server runs (so a SLURM job holds
# the GPU exactly that long), writes `http://HOST:PORT/v1` to the URL file when /v1/models answers,
# removes the file when the server stops, and stops the server on SIGTERM/SIGINT (scancel).
# Then: judgelab endpoints --url-file URLFILE --model NAME=SERVED --out config/endpoints.yaml
set -euo pipefail

engine=vllm model="" alias="" port=8000 host=0.0.0.0 url_file="" advertise="" timeout=1800
extra=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --engine) engine=$2; shift 2 ;;
        --model) model=$2; shift 2 ;;
        --alias) alias=$2; shift 2 ;;          # the model name clients send (default: MODEL)
        --port) port=$2; shift 2 ;;
        --host) host=$2; shift 2 ;;            # interface to listen on
        --advertise) advertise=$2; shift 2 ;;  # host name written into the URL (default: hostname -f)
        --url-file) url_file=$2; shift 2 ;;
        --timeout) timeout=$2; shift 2 ;;      # seconds to wait for the server to answer
        --) shift; extra=("$@"); break ;;
        *) echo "serve.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
[[ -n "$model" ]] || { echo "serve.sh: --model is required" >&2; exit 2; }
[[ -n "$url_file" ]] || { echo "serve.sh: --url-file is required" >&2; exit 2; }
alias=${alias:-$model}
advertise=${advertise:-$(hostname -f 2>/dev/null || hostname)}
python=${PYTHON:-python3}

case "$engine" in
    vllm)
        command -v vllm >/dev/null || { echo "serve.sh: vllm not found (pip install vllm on the GPU host)" >&2; exit 2; }
        vllm serve "$model" --host "$host" --port "$port" --served-model-name "$alias" "${extra[@]}" &
        ;;
    llamacpp)
        "$python" -m judgelab.llm.llama_server --model "$model" --model_alias "$alias" --host "$host" \
            --port "$port" "${extra[@]}" &
        ;;
    *) echo "serve.sh: --engine must be vllm or llamacpp, not $engine" >&2; exit 2 ;;
esac
server=$!
cleanup() { rm -f "$url_file"; kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; }
trap cleanup EXIT
trap 'exit 143' TERM INT

probe="http://127.0.0.1:${port}/v1/models"
deadline=$((SECONDS + timeout))
until "$python" -c "import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=5).read()" "$probe" 2>/dev/null; do
    kill -0 "$server" 2>/dev/null || { echo "serve.sh: the $engine server exited before answering" >&2; exit 1; }
    (( SECONDS < deadline )) || { echo "serve.sh: no answer from $probe within ${timeout}s" >&2; exit 1; }
    sleep 2
done
mkdir -p "$(dirname "$url_file")"
echo "http://${advertise}:${port}/v1" > "$url_file.tmp" && mv "$url_file.tmp" "$url_file"
echo "serve.sh: $alias at $(cat "$url_file") (url in $url_file)"
wait "$server"
