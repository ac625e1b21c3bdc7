"""The native library under the local backend: llama.cpp as llama-cpp-python built it.

Two things live here.

**AMX kept out at load.** llama-cpp-python compiles llama.cpp for the CPU it is installed on
(``GGML_NATIVE``); on an Intel CPU that reports AMX the build includes ggml's AMX kernels, and
llama.cpp puts the weights of the types they cover (SmolLM2's Q4_1 among them) in an AMX "extra"
buffer, whose matrix products run those kernels. On some machines they die at the first token
(SIGSEGV at ``ldtilecfg`` in ``libggml-cpu.so``; ggml-org/llama.cpp pull request 26954 gives the
likely cause: ggml asks for the tile permission on the main thread only, and a tile
configuration kept on the stack can be optimised away). The extra buffer types are the only way
into those kernels, so :func:`load_fields` turns them off (``use_extra_bufts = false``, llama.cpp's
``--no-repack``) when the build has AMX kernels, unless the model entry says ``amx: true``; the
weights then sit in plain CPU buffers and run the AVX-512 / AVX2 kernels a build without AMX runs.
A build without AMX kernels (any other CPU) loads exactly as before.

**A death by signal is recorded and stops the next model jobs.** A job that loads the model arms
:func:`faulthandler` into a record beside the request cache (``<cache folder>/native/``): if the
library kills the process (SIGSEGV, SIGILL, SIGBUS, SIGFPE, SIGABRT), the record keeps the job, the
library, the CPU and the Python stack; a clean close removes it. A model job that finds a record of
the same library, CPU and AMX choice stops before loading the model, with the one line
:func:`explain` writes (the library, the likely cause, the command that fixes it); the workflow's
``onerror`` prints the same line after the run (:func:`deaths_line`). A record stops applying when
the library is rebuilt, the CPU differs (a node of another kind sharing the cache) or the AMX
choice changes; deleting it tries again.
"""

from __future__ import annotations

import contextlib
import faulthandler
import hashlib
import importlib.metadata
import importlib.util
import json
import logging
import os
import socket
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

log = logging.getLogger("judgelab")

#: The signals :mod:`faulthandler` names in its first line, as ``Fatal Python error: <name>``.
SIGNAL_NAMES = {
    "Segmentation fault": "SIGSEGV",
    "Illegal instruction": "SIGILL",
    "Bus error": "SIGBUS",
    "Floating-point exception": "SIGFPE",
    "Floating point exception": "SIGFPE",
    "Aborted": "SIGABRT",
}


def build_features(info: str | None = None) -> dict[str, str]:
    """The CPU features llama.cpp was built with, from ``llama_print_system_info()`` (``"CPU : SSE3
    = 1 | AVX2 = 1 | ... | AMX_INT8 = 1 |"``; ``info``: that text, for tests)."""
    if info is None:
        import llama_cpp

        info = llama_cpp.llama_print_system_info().decode("utf-8", errors="replace")
    out: dict[str, str] = {}
    for part in info.replace("\n", "|").split("|"):
        name, sep, value = part.partition("=")
        name = name.split(":")[-1].strip()
        if sep and name:
            out[name] = value.strip()
    return out


def has_amx_kernels(features: dict[str, str] | None = None) -> bool:
    """Does the installed build include ggml's AMX kernels (it reports ``AMX_INT8 = 1``)?"""
    feats = build_features() if features is None else features
    return feats.get("AMX_INT8") == "1"


def load_fields(amx: bool, features: dict[str, str] | None = None) -> dict[str, Any]:
    """The ``llama_model_params`` fields the local backend sets over llama.cpp's defaults: with a
    build that has AMX kernels and ``amx`` false, no extra buffer types (module docstring)."""
    if not amx and has_amx_kernels(features):
        return {"use_extra_bufts": False}
    return {}


@contextlib.contextmanager
def model_params(fields: dict[str, Any]) -> Iterator[None]:
    """While a ``llama_cpp.Llama`` is made inside this block, its model parameters start from
    llama.cpp's defaults with ``fields`` set (``Llama()`` takes no argument for them: it fills
    ``llama_model_default_params()``, which this replaces for the block's length)."""
    if not fields:
        yield
        return
    import llama_cpp.llama as llama_module

    binding = llama_module.llama_cpp
    defaults = binding.llama_model_default_params

    def with_fields():
        params = defaults()
        for name, value in fields.items():
            setattr(params, name, value)
        return params

    binding.llama_model_default_params = with_fields
    try:
        yield
    finally:
        binding.llama_model_default_params = defaults


# -- what died, where ---------------------------------------------------------------------------


def library_file() -> Path | None:
    """llama.cpp's CPU library inside the installed llama-cpp-python (None if not found)."""
    spec = importlib.util.find_spec("llama_cpp")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(list(spec.submodule_search_locations)[0]) / "lib"
    for pattern in ("libggml-cpu.so", "libggml-cpu*", "libllama.so", "libllama*", "*.so*"):
        found = sorted(folder.glob(pattern))
        if found:
            return found[0]
    return None


def _cpu() -> tuple[str, str]:
    """The CPU's model name and a digest of its feature flags (/proc/cpuinfo; empty elsewhere)."""
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return "", ""
    name = flags = ""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key == "model name" and not name:
            name = value.strip()
        elif key == "flags" and not flags:
            flags = " ".join(sorted(value.split()))
        if name and flags:
            break
    return name, hashlib.sha256(flags.encode()).hexdigest()[:16]


def cpu_has_amx() -> bool:
    """Does this CPU report AMX (``amx_tile`` in /proc/cpuinfo)?"""
    try:
        return " amx_tile" in Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return False


def identity(amx_in_use: bool) -> dict[str, Any]:
    """What a death is recorded against: the library file (path, size, modification time), the
    binding's version, the CPU and whether the AMX kernels were in use."""
    lib = library_file()
    stat = lib.stat() if lib is not None else None
    cpu, flags = _cpu()
    try:
        version = importlib.metadata.version("llama-cpp-python")
    except importlib.metadata.PackageNotFoundError:
        version = "?"
    return {
        "library": str(lib) if lib else None,
        "library_size": stat.st_size if stat else None,
        "library_mtime_ns": stat.st_mtime_ns if stat else None,
        "version": version,
        "cpu": cpu,
        "cpu_flags": flags,
        "amx_in_use": bool(amx_in_use),
    }


@dataclass(frozen=True)
class Death:
    """A recorded death: the record's files, the job, the signal and the identity it died under."""

    record: Path
    fault: Path
    job: str
    log: str | None
    signal: str
    model: str
    identity: dict[str, Any]


def records_dir(state_dir: str | Path) -> Path:
    return Path(state_dir) / "native"


def deaths(state_dir: str | Path | None, ident: dict[str, Any] | None = None) -> list[Death]:
    """The recorded deaths in ``state_dir`` (the request cache's folder), oldest first; with
    ``ident``, those recorded against it only. A record whose fault file is empty belongs to a job
    still running (or one killed by SIGKILL, which no handler sees): not a death."""
    if state_dir is None:
        return []
    folder = records_dir(state_dir)
    if not folder.is_dir():
        return []
    out = []
    for record in sorted(folder.glob("*.json"), key=lambda p: p.stat().st_mtime):
        fault = record.with_suffix(".fault")
        try:
            text = fault.read_text(errors="replace")
            data = json.loads(record.read_text())
        except (OSError, ValueError):
            continue
        if not text.strip():
            continue
        if ident is not None and data.get("identity") != ident:
            continue
        first = text.strip().splitlines()[0]
        name = first.removeprefix("Fatal Python error:").strip()
        out.append(
            Death(
                record=record,
                fault=fault,
                job=str(data.get("job", "?")),
                log=data.get("log"),
                signal=SIGNAL_NAMES.get(name, name or "a signal"),
                model=str(data.get("model", "<name>")),
                identity=dict(data.get("identity") or {}),
            )
        )
    return out


def portable_build_command(version: str, flags: str | None = None) -> str:
    """The command that rebuilds llama-cpp-python without llama.cpp's native CPU detection, for
    the instruction sets this CPU reports and never AMX (``flags``: /proc/cpuinfo's, for tests)."""
    if flags is None:
        try:
            flags = Path("/proc/cpuinfo").read_text(errors="replace")
        except OSError:
            flags = ""
    have = set(flags.split())
    args = ["-DGGML_NATIVE=OFF"]
    for flag, option in (
        ("avx", "AVX"),
        ("avx2", "AVX2"),
        ("fma", "FMA"),
        ("f16c", "F16C"),
        ("bmi2", "BMI2"),
    ):
        if flag in have:
            args.append(f"-DGGML_{option}=ON")
    if "avx512f" in have:
        args.append("-DGGML_AVX512=ON")
    return (
        f'CMAKE_ARGS="{" ".join(args)}" pip install --force-reinstall --no-cache-dir --no-deps '
        f"llama-cpp-python=={version}"
    )


def explain(death: Death) -> str:
    """One line: what died, where, the likely cause and the command that fixes it."""
    ident = death.identity
    lib = ident.get("library") or "llama-cpp-python's native library"
    version = ident.get("version", "?")
    where = f"job '{death.job}'" + (f" (log {death.log})" if death.log else "")
    if death.signal == "SIGILL":
        cause = "the library uses an instruction this CPU lacks (built on or for another machine)"
        fix = f"rebuild it here: pip install --force-reinstall --no-cache-dir --no-deps llama-cpp-python=={version}"
    elif ident.get("amx_in_use"):
        cause = "llama.cpp's AMX kernels on this CPU (ggml-org/llama.cpp#26954)"
        fix = f"set models.{death.model}.amx: false (the default)"
    else:
        cause = "a fault in llama.cpp's native code on this CPU"
        fix = "rebuild it without native CPU detection: " + portable_build_command(version)
    return (
        f"the embedded model's native library died ({death.signal}) in {where}: {lib} "
        f"(llama-cpp-python {version}); likely cause: {cause}; fix: {fix}; local-model jobs on "
        f"this build and CPU stop before loading the model while {death.record} exists (its stack: "
        f"{death.fault}; delete both to try again)"
    )


def deaths_lines(state_dir: str | Path | None, since: float = 0.0) -> list[str]:
    """The one line of each distinct death recorded in ``state_dir`` (the request cache's folder)
    at or after ``since`` (a time stamp: the workflow's ``onerror`` gives its start)."""
    seen, lines = set(), []
    for death in deaths(state_dir):
        if death.fault.stat().st_mtime < since:
            continue
        key = (json.dumps(death.identity, sort_keys=True), death.signal)
        if key not in seen:
            seen.add(key)
            lines.append("judgelab: " + explain(death))
    return lines


def _forget_the_vanished(folder: Path) -> None:
    """Remove the records of this host's jobs that ended without a clean close and without a
    fault (killed by SIGKILL: no handler runs): their process is gone and they record nothing."""
    host = socket.gethostname()
    for record in folder.glob("*.json"):
        fault = record.with_suffix(".fault")
        try:
            if fault.stat().st_size > 0:
                continue
            data = json.loads(record.read_text())
        except (OSError, ValueError):
            continue
        if data.get("host") != host or not isinstance(data.get("pid"), int):
            continue
        try:
            os.kill(data["pid"], 0)
        except ProcessLookupError:
            for path in (fault, record):
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
        except PermissionError:
            continue


class Watch:
    """A model job's record of a possible death (module docstring): :meth:`arm` before the model
    loads, :meth:`disarm` when it is closed. Without a state folder (a backend used outside a
    cache) it only checks nothing and records nothing."""

    def __init__(self, state_dir: str | Path | None, ident: dict[str, Any], job: str, model: str):
        self.state_dir = Path(state_dir) if state_dir is not None else None
        self.ident, self.job, self.model = ident, job, model
        self.record: Path | None = None
        self._fault: IO[str] | None = None
        self._previous: tuple[bool, Any] | None = None

    def earlier(self) -> list[Death]:
        return deaths(self.state_dir, self.ident)

    def arm(self) -> None:
        if self.state_dir is None:
            return
        folder = records_dir(self.state_dir)
        folder.mkdir(parents=True, exist_ok=True)
        _forget_the_vanished(folder)
        stem = f"{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}-{id(self):x}"
        self.record = folder / f"{stem}.json"
        log_name = getattr(sys.stderr, "name", None)
        data = {
            "job": self.job,
            "model": self.model,
            "log": log_name if isinstance(log_name, str) and os.path.isfile(log_name) else None,
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "identity": self.ident,
        }
        self.record.write_text(json.dumps(data, indent=1) + "\n")
        self._fault = open(self.record.with_suffix(".fault"), "w", encoding="utf-8")  # noqa: SIM115
        self._previous = (faulthandler.is_enabled(), sys.stderr)
        faulthandler.enable(file=self._fault, all_threads=True)

    def disarm(self) -> None:
        if self.record is None or self._fault is None:
            return
        faulthandler.disable()
        if self._previous is not None and self._previous[0]:
            with contextlib.suppress(ValueError, OSError, AttributeError):
                faulthandler.enable(file=self._previous[1])
        self._fault.close()
        for path in (self.record.with_suffix(".fault"), self.record):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        self.record, self._fault = None, None
