"""Reading the context used from a transcript, and the model windows it is measured against."""

from __future__ import annotations

import json

import pytest

from gitstate.errors import InvalidFile
from gitstate.law.load import load_lifecycle
from gitstate.resources import preset_dir
from gitstate.runtime.claude_code import transcript as t


def _line(prompt, model="claude-sonnet-4-5", sidechain=False, split=(5, 100)):
    return json.dumps({"type": "assistant", "isSidechain": sidechain, "message": {
        "model": model, "usage": {"input_tokens": split[0],
                                  "cache_creation_input_tokens": split[1],
                                  "cache_read_input_tokens": prompt - sum(split),
                                  "output_tokens": 999}}}) + "\n"


def test_the_latest_main_turn_counts_all_three_kinds_of_input(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(_line(10_000) + _line(50_000) + '{"type": "user"}\n'
                    + _line(190_000, sidechain=True) + "not json\n")
    assert t.latest_usage(str(path)) == (50_000, "claude-sonnet-4-5")
    assert t.measure(str(path)) == (25.0, 50_000, 200_000)


def test_a_turn_larger_than_the_window_measures_a_full_context_not_more(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(_line(250_000))                   # more than a 200k window holds
    assert t.measure(str(path)) == (100.0, 250_000, 200_000)


def test_only_the_tail_of_a_long_transcript_is_read(tmp_path):
    path = tmp_path / "t.jsonl"
    filler = json.dumps({"type": "user", "message": {"content": "x" * 10_000}}) + "\n"
    path.write_text(_line(1_000) + filler * 100 + _line(80_000))
    assert t.latest_usage(str(path))[0] == 80_000
    path.write_text(_line(1_000) + filler * 100)      # no turn within the tail: unknown
    assert t.latest_usage(str(path)) is None


def test_windows():
    assert t.window_of("claude-opus-4-6") == 200_000
    assert t.window_of("claude-sonnet-4-5[1m]") == 1_000_000
    assert t.window_of("some-other-model") is None
    assert t.window_of("some-other-model", 128_000) == 128_000
    assert t.window_of("claude-opus-4-6", 500_000) == 500_000     # the policy wins
    assert t.measure("/nonexistent") is None


def test_the_lifecycle_may_state_the_context_window():
    text = (preset_dir("haak") / "lifecycle.yaml").read_text()
    lc = load_lifecycle(text.replace("  max_depth: 3", "  max_depth: 3\n  context_window: 400000"))
    assert lc.policies.context_window == 400_000
    assert lc.to_dict()["policies"]["context_window"] == 400_000
    with pytest.raises(InvalidFile, match="context_window"):
        load_lifecycle(text.replace("  max_depth: 3", "  max_depth: 3\n  context_window: lots"))


def test_the_shipped_settings_snippet_is_what_init_merges():
    from gitstate.resources import read_shipped
    from gitstate.runtime.claude_code.settings import merge
    assert json.loads(read_shipped("agent", "claude-settings.json")) == merge({})[0]
