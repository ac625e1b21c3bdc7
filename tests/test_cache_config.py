"""The request cache's mode and lease are config keys (`cache_mode`, `cache_lease`): the schema's
defaults (auto, 60 s), the environment variables overriding them, every workflow script opening
its job's cache with them, a real workflow run in `shards` mode writing a shard; `judgelab cache
merge` and `judgelab cache salvage` run the maintenance tools."""

from __future__ import annotations

import inspect
import json
import re
import shutil
import sqlite3
from pathlib import Path

import pytest
import yaml
from conftest import ROOT
from fake_openai import FakeOpenAI, ServerThread
from snakerun import make_workdir, snakemake

from judgelab.cache.shards import shard_folder
from judgelab.cache.store import CacheConfig, RequestCache
from judgelab.cli import main
from judgelab.llm.session import LLMSession
from judgelab.wiring.facade import Project

API_MODEL = {"backend": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1", "api_key_env": None}


@pytest.fixture(autouse=True)
def no_cache_env(monkeypatch):
    for var in ("JUDGELAB_CACHE_MODE", "JUDGELAB_CACHE_LEASE", "JUDGELAB_CACHE"):
        monkeypatch.delenv(var, raising=False)


def test_schema_defaults_and_checked_values(tmp_path):
    project = Project.load([], ROOT)
    assert project.config["cache_mode"] == "auto" and project.config["cache_lease"] == 60
    assert project.config["cache_space_wait"] == 600
    bad = tmp_path / "bad.yaml"
    bad.write_text("cache_mode: nfs\n")
    from judgelab.errors import InputError

    with pytest.raises(InputError, match="config key 'cache_mode'"):
        Project.load([str(bad)], ROOT)
    bad.write_text("cache_lease: 0\n")
    with pytest.raises(InputError, match="config key 'cache_lease'"):
        Project.load([str(bad)], ROOT)
    bad.write_text("cache_space_wait: -1\n")
    with pytest.raises(InputError, match="config key 'cache_space_wait'"):
        Project.load([str(bad)], ROOT)


def test_the_config_keys_open_the_cache_and_the_variables_override_them(tmp_path, monkeypatch):
    path = tmp_path / "c" / "requests.sqlite"
    cfg = {"cache": str(path), "cache_mode": "shards", "cache_lease": 7.5, "cache_space_wait": 12}
    with CacheConfig.of(cfg).open() as cache:
        assert (cache.mode, cache.lease, cache.space_wait) == ("shards", 7.5, 12.0)
        cache.put("k", {"q": 1}, {"text": "a"})
    assert list(shard_folder(path).glob("*.sqlite")), "shards mode writes its own shard"
    monkeypatch.setenv("JUDGELAB_CACHE_LEASE", "3")
    monkeypatch.setenv("JUDGELAB_CACHE_MODE", "shards")
    with CacheConfig.of({**cfg, "cache_mode": "wal"}).open() as cache:
        assert (cache.mode, cache.lease) == ("shards", 3.0)
    # a model session takes the same settings (the workflow's scripts pass CacheConfig.of(config))
    monkeypatch.delenv("JUDGELAB_CACHE_MODE")
    monkeypatch.delenv("JUDGELAB_CACHE_LEASE")
    with LLMSession(API_MODEL, CacheConfig.of(cfg), name="m") as client:
        assert (client.cache.mode, client.cache.lease) == ("shards", 7.5)
    with LLMSession(API_MODEL, str(tmp_path / "plain.sqlite"), name="m") as client:
        assert (client.cache.mode, client.cache.lease) == ("wal", 60.0)


def test_every_script_of_an_llm_job_opens_the_configured_cache():
    """A script either runs its job through the adapter (whose job context opens the config's
    cache: tests/test_runner.py) or passes the config's cache keys itself; none opens another."""
    from judgelab.project.runner import context_of

    scripts = sorted((ROOT / "workflow" / "scripts").rglob("*.py"))
    through_run = [p for p in scripts if "run(snakemake," in p.read_text()]
    calling = [p for p in scripts if re.search(r"\bcache=", p.read_text())]
    assert len(through_run) + len(calling) >= 21, sorted(p.name for p in through_run + calling)
    for p in calling:
        uses = re.findall(r"\bcache=([^,\n]+)", p.read_text())
        assert uses == ["CacheConfig.of(snakemake.config)"], (p.name, uses)
    assert "CacheConfig.of(smk.config)" in inspect.getsource(context_of)


@pytest.mark.slow
def test_a_workflow_run_with_cache_mode_shards_writes_a_shard(tmp_path):
    fake = FakeOpenAI()
    with ServerThread(fake.app()) as srv:
        wd = make_workdir(tmp_path, "api")
        over = {
            "models": {"gpt": {"base_url": srv.base_url, "api_key_env": None}},
            "cache_mode": "shards",
            "cache_lease": 30,
        }
        (wd / "over.yaml").write_text(yaml.safe_dump(over))
        target = "results/peras/judgments/fx/gpt/wo_cot/default.tsv"
        res = snakemake(wd, target, "--configfile", str(wd / "over.yaml"), cores=1, timeout=600)
        assert res.returncode == 0, res.stderr[-4000:]
    assert sum(fake.served.values()) == 8
    shards = list(shard_folder(wd / "cache" / "requests.sqlite").glob("*.sqlite"))
    assert len(shards) == 1
    with sqlite3.connect(shards[0]) as conn:
        assert conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 8
    # merged by the CLI into the main file: a later run in the default mode finds every answer
    assert main(["cache", "merge", "--cache", str(wd / "cache" / "requests.sqlite")]) == 0
    with RequestCache(wd / "cache" / "requests.sqlite", mode="wal") as cache:
        assert cache.stats()["entries"] == 8


def test_cli_cache_stats_merge_and_salvage(tmp_path, capsys):
    path = tmp_path / "requests.sqlite"
    with RequestCache(path, mode="shards") as cache:
        for i in range(3):
            cache.put(f"k{i}", {"q": i}, {"text": str(i)})
    assert main(["cache", "--cache", str(path), "--cache-mode", "shards"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["mode"] == "shards"
    assert main(["cache", "merge", "--cache", str(path)]) == 0
    merged = json.loads(capsys.readouterr().out)
    assert merged["added"] == 3
    assert main(["cache", "stats", "--cache", str(path)]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert (stats["mode"], stats["entries"]) == ("wal", 3)
    broken = tmp_path / "broken.sqlite"
    shutil.move(path, broken)
    assert main(["cache", "salvage", str(broken), str(tmp_path / "new.sqlite")]) == 0
    assert json.loads(capsys.readouterr().out)["copied"] == 3
    with RequestCache(tmp_path / "new.sqlite") as cache:
        assert cache.get("k2") == {"text": "2"}
    assert main(["cache", "salvage", str(tmp_path / "none.sqlite"), str(tmp_path / "x.sqlite")]) == 2
    assert "no such file to salvage" in capsys.readouterr().err


def test_estimate_opens_the_cache_in_the_configured_mode(tmp_path, monkeypatch):
    from judgelab.cache.shards import merge_shards
    from judgelab.wiring.estimate import estimate

    wd = make_workdir(tmp_path / "run", "api")
    cache = wd / "cache" / "requests.sqlite"
    with RequestCache(cache, mode="shards") as c:
        c.put("k", {"q": 1}, {"text": "a"})
    merge_shards(cache)  # the main file, in rollback-journal mode as shards mode reads it
    (wd / "over.yaml").write_text(yaml.safe_dump({"cache_mode": "shards"}))
    monkeypatch.chdir(wd)
    project = Project.load([str(wd / "over.yaml")], ".", ROOT)
    _, notes = estimate(project, directory=".")
    assert f"cache: {Path('cache') / 'requests.sqlite'}" in notes
    # opened in shards mode: the main file was not turned into a WAL file (shards mode would
    # then refuse it until merged again)
    with sqlite3.connect(cache) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
