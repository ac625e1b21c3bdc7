"""Each config key's default is written once, in the schema (workflow/schemas/config.schema.yaml):
the plans build the typed settings from the validated config the schema filled in; a settings
field that has a default takes it from the schema (``judgelab.schema.default_of``), and so does
the code reading a model entry, which is not filled in (``judgelab.schema.default``). A Python
default equal to the default of a schema key of the same name fails here: a field default of
any dataclass of the package, a literal fallback ``x.get("key", literal)``, and a keyword default
of a function of a study module against the keys of the study's own section (a function takes
what the section sets from its caller). ``None`` or ``{}`` - "not given", an empty section - is
no restatement."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import pkgutil
from pathlib import Path

import pytest
import yaml
from conftest import ROOT

import judgelab
from judgelab import schema
from judgelab.errors import InputError

SRC = ROOT / "workflow" / "src" / "judgelab"


def _plain(value):
    """Tuples as lists (a param's JSON has lists), recursively."""
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def schema_defaults(node: dict | None = None, path: str = "") -> list[tuple[str, str, object]]:
    """(key, its last component, default) of every key of the schema with a default."""
    node = (
        yaml.safe_load((ROOT / "workflow" / "schemas" / "config.schema.yaml").read_text())
        if node is None
        else node
    )
    out = []
    for name, sub in (node.get("properties") or {}).items():
        if isinstance(sub, dict):
            full = f"{path}.{name}" if path else name
            if "default" in sub:
                out.append((full, name, _plain(sub["default"])))
            out += schema_defaults(sub, full)
    extra = node.get("additionalProperties")
    if isinstance(extra, dict):
        out += schema_defaults(extra, f"{path}.<name>")
    if isinstance(node.get("items"), dict):
        out += schema_defaults(node["items"], f"{path}[]")
    return out


def same_key(field: str, leaf: str) -> bool:
    """A field named as the key, or as the key's last words (``repeat`` for ``stuff_repeat``,
    ``k`` for ``top_k``), or the other way round."""
    return field == leaf or leaf.endswith("_" + field) or field.endswith("_" + leaf)


def restated(field: str, value: object, defaults) -> list[str]:
    if value is None or value in ({}, (), []):  # "none": an empty collection restates no default
        return []
    value = _plain(value)
    return [
        key
        for key, leaf, default in defaults
        if same_key(field, leaf) and default == value and type(default) is type(value)
    ]


def package_dataclasses() -> list[type]:
    classes = {}
    for info in pkgutil.walk_packages(judgelab.__path__, "judgelab."):
        module = importlib.import_module(info.name)
        for obj in vars(module).values():
            if (
                isinstance(obj, type)
                and dataclasses.is_dataclass(obj)
                and obj.__module__.startswith("judgelab.")
            ):
                classes[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return list(classes.values())


def test_no_dataclass_field_restates_a_schema_default():
    defaults = schema_defaults()
    classes = package_dataclasses()
    assert len(classes) > 40  # every Settings value of the package, and the other dataclasses
    offenders, from_schema = [], 0
    for cls in classes:
        for f in dataclasses.fields(cls):
            if isinstance(f.default_factory, schema.Default):  # the schema's own default
                f.default_factory()  # its key exists and has a default
                from_schema += 1
                continue
            if f.default is not dataclasses.MISSING:
                value = f.default
            elif f.default_factory is not dataclasses.MISSING:
                value = f.default_factory()
            else:
                continue
            offenders += [
                f"{cls.__module__}.{cls.__qualname__}.{f.name} = {value!r}: {k}"
                for k in restated(f.name, value, defaults)
            ]
    assert not offenders, "defaults written in Python and in the schema:\n" + "\n".join(offenders)
    assert from_schema > 30


def literal_fallbacks(tree: ast.AST):
    """(line, key, value) of every ``x.get("key", literal)`` / ``x.setdefault(...)`` / ``x.pop(...)``."""
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("get", "setdefault", "pop")
            and len(node.args) == 2
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            try:
                yield node.lineno, node.args[0].value, ast.literal_eval(node.args[1])
            except ValueError:
                continue


def test_no_literal_fallback_restates_a_schema_default():
    defaults = schema_defaults()
    offenders = []
    for f in sorted(SRC.rglob("*.py")):
        for line, key, value in literal_fallbacks(ast.parse(f.read_text(encoding="utf-8"))):
            for k, leaf, default in defaults:
                if (
                    key == leaf
                    and value not in (None, {})
                    and _plain(value) == default
                    and type(default) is type(_plain(value))
                ):
                    offenders.append(f"{f.relative_to(ROOT)}:{line}: .get({key!r}, {value!r}) restates {k}")
    assert not offenders, "\n".join(offenders)


def keyword_defaults(tree: ast.AST):
    """(line, function, parameter, value) of every literal keyword default of a function."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            a = node.args
            positional = a.posonlyargs + a.args
            pairs = list(zip(positional[len(positional) - len(a.defaults) :], a.defaults))
            pairs += [(k, d) for k, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None]
            name = getattr(node, "name", "<lambda>")
            for arg, default in pairs:
                try:
                    yield arg.lineno, name, arg.arg, ast.literal_eval(default)
                except ValueError:
                    continue


def section_defaults(section: str, defaults) -> list[tuple[str, str, object]]:
    return [d for d in defaults if d[0].startswith(section + ".")]


def restated_keyword_defaults(tree: ast.AST, own) -> list[tuple[int, str, str, object, list[str]]]:
    """(line, function, parameter, value, keys) of every keyword default restating a default of
    ``own``."""
    return [
        (line, function, name, value, keys)
        for line, function, name, value in keyword_defaults(tree)
        if (keys := restated(name, value, own))
    ]


def test_no_study_function_restates_a_default_of_its_section():
    """A function of a study module takes what its section sets from its caller (the plan's
    settings value, which the schema filled in), so a keyword default equal to the default of a
    key of the same name in the study's own section (``peras.*`` for ``judgelab.studies.peras``)
    is a second place that default is written. The core library's functions (``judgelab.analysis``,
    ``judgelab.llm``, ``judgelab.data``, ...) keep their own defaults, such as ``alpha=0.05`` or
    ``seed=0``: those are a library's conventions, as scipy's are, not restatements of a config
    key, and no study reaches them without passing its setting."""
    from judgelab.studies import STUDIES

    defaults = schema_defaults()
    offenders, files = [], 0
    for study in STUDIES:
        section = importlib.import_module(f"judgelab.studies.{study}.plan").Plan.name
        own = section_defaults(section, defaults)
        assert own, section
        for f in sorted((SRC / "studies" / study).rglob("*.py")):
            files += 1
            tree = ast.parse(f.read_text(encoding="utf-8"))
            offenders += [
                f"{f.relative_to(ROOT)}:{line}: {function}({name}={value!r}) restates {', '.join(keys)}"
                for line, function, name, value, keys in restated_keyword_defaults(tree, own)
            ]
    assert files > 40
    assert not offenders, "keyword defaults written in a study and in the schema:\n" + "\n".join(offenders)


def test_the_checks_find_a_restated_default():
    """The checks above on purpose-built offenders (so they are not vacuous)."""
    defaults = schema_defaults()
    assert restated("k", 10, defaults) == ["ranking.correlation.top_k"]
    assert "models.<name>.concurrency" in restated("concurrency", 8, defaults)
    assert restated("concurrency", 9, defaults) == []
    found = list(literal_fallbacks(ast.parse('spec.get("timeout", 60)\nspec.get("timeout", t)\n')))
    assert found == [(1, "timeout", 60)]
    source = ast.parse(
        "def tau(x, k=10, *, seed=0, n=3, test=t, top_k=None):\n"
        "    return lambda p=0.9: p\n"
        "def table(rows, alpha=0.05, /):\n"
        "    pass\n"
    )
    ranking = section_defaults("ranking", defaults)
    assert restated_keyword_defaults(source, ranking) == [
        (1, "tau", "k", 10, ["ranking.correlation.top_k"]),
        (1, "tau", "seed", 0, ["ranking.correlation.seed", "ranking.ppi.seed"]),
        (
            3,
            "table",
            "alpha",
            0.05,
            ["ranking.correlation.ci_alpha", "ranking.correlation.sig_alpha", "ranking.ppi.alpha"],
        ),
        (2, "<lambda>", "p", 0.9, ["ranking.correlation.rbo_p"]),
    ]
    # only the study's own section: PERAS has no top_k, and its seeds are 42
    assert restated_keyword_defaults(source, section_defaults("peras", defaults)) == [
        (3, "table", "alpha", 0.05, ["peras.significance.alpha"])
    ]


def test_schema_default_reads_a_key_and_a_name_of_a_mapping():
    assert schema.default("ranking.correlation.top_k") == 10
    assert schema.default("models.<name>.concurrency") == 8
    with pytest.raises(KeyError, match="no default"):
        schema.default("models.<name>.model")


def test_a_settings_value_built_without_a_field_has_the_config_default():
    from judgelab.studies.ranking.settings import CorrelationSettings, PPISettings
    from judgelab.studies.simulation.settings import Selection

    config = {
        "datasets": {"d": {"source": "sample", "format": "trec"}},
        "models": {"m": {"backend": "local"}},
        "judges": [],
    }
    from judgelab.project.config import validate

    corr = validate(config)["ranking"]["correlation"]
    assert CorrelationSettings() == CorrelationSettings(
        k=corr["top_k"],
        p=corr["rbo_p"],
        n_boot=corr["n_boot"],
        seed=corr["seed"],
        ci_alpha=corr["ci_alpha"],
        sig_alpha=corr["sig_alpha"],
        test=corr["test"],
        ci_method=corr["ci_method"],
    )
    assert PPISettings().n == tuple(config["ranking"]["ppi"]["n"])
    assert Selection("jsonl", pool=1, validation=1, seed=0).evaluators == ()


def test_a_model_entry_is_checked_but_not_filled_in():
    from judgelab.project.config import validate

    config = {
        "datasets": {"d": {"source": "sample", "format": "trec"}},
        "models": {"m": {"backend": "local"}},
        "judges": ["m"],
    }
    validate(config)
    assert config["models"]["m"] == {"backend": "local"}  # a tracked param: unchanged
    assert config["ranking"]["correlation"]["top_k"] == 10  # any other section: filled in
    with pytest.raises(InputError, match=r"^config key 'models\.gpt\.prices\.batch_factor': 3 is greater"):
        schema.validate_entry(
            {"input": 1, "output": 2, "batch_factor": 3}, "models.<name>.prices", "models.gpt.prices"
        )


def test_every_default_of_a_model_entry_is_the_backend_default(tmp_path: Path):
    """A model entry without its optional keys builds a backend at the schema's defaults."""
    from judgelab.llm.backends import make_backend

    b = make_backend({"backend": "openai", "model": "x", "api_key_env": None}, "m", need_key=False)
    s = b.settings
    got = {
        "concurrency": s.concurrency,
        "timeout": s.timeout,
        "max_retries": s.max_retries,
        "batch": s.batch,
        "batch_poll_interval": s.batch_poll_interval,
        "send_sampling": s.send_sampling,
        "logprobs": b.logprobs,
        "top_logprobs": b.top_logprobs,
        "token_limit_param": b.token_limit_param,
    }
    assert got == {k: schema.default(f"models.<name>.{k}") for k in got}
    assert b.interrupt_grace == schema.default("interrupt_grace")
