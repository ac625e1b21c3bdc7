"""judgelab.data.textfiles.load_yaml (libyaml when PyYAML has it) reads what yaml.safe_load reads:
the same document for every YAML file this checkout ships, and for a text libyaml refuses, the same
error with the same line as yaml.safe_load."""

from __future__ import annotations

import subprocess

import pytest
import yaml
from conftest import ROOT

from judgelab.data.textfiles import load_yaml


def shipped_yaml() -> list[str]:
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "*.yaml", "*.yml"], capture_output=True, text=True, check=True
    ).stdout.split()
    assert len(listed) > 40, listed  # the schema, configs, prompts, personas, profiles, .test/
    return listed


def test_every_shipped_yaml_file_reads_as_safe_load_reads_it():
    if getattr(yaml, "CSafeLoader", None) is None:
        pytest.skip("this PyYAML has no libyaml: load_yaml is yaml.safe_load itself")
    for rel in shipped_yaml():
        text = (ROOT / rel).read_text(encoding="utf-8")
        assert load_yaml(text) == yaml.safe_load(text), rel


@pytest.mark.parametrize(
    "text",
    [
        "a: [1,\n b: 2\n",  # a flow sequence never closed
        "a: 1\n b: 2\n",  # a bad indent
        "key: 'open quote\n",
        "- a\nb: 1\n",  # a sequence then a mapping at the top
        "a: *nowhere\n",  # an undefined alias
        "a: !!python/object:os.system x\n",  # a tag the safe loader refuses
    ],
)
def test_a_text_libyaml_refuses_raises_safe_loads_own_error(text):
    with pytest.raises(yaml.YAMLError) as expected:
        yaml.safe_load(text)
    with pytest.raises(yaml.YAMLError) as got:
        load_yaml(text)
    assert str(got.value) == str(expected.value)
    assert got.value.problem_mark.line == expected.value.problem_mark.line
