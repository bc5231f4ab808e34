"""Codex's hook payloads read as Claude Code's, and the context measured from a Codex rollout
(gitstate/runtime/codex/hooks.py), without the binary: its end-to-end tests are in
test_codex_e2e.py."""

from __future__ import annotations

import json

from gitstate.runtime.codex import hooks


def test_a_payload_keeps_its_fields_and_maps_what_claude_code_names_otherwise():
    start = {"session_id": "s1", "cwd": "/r", "transcript_path": None, "model": "m",
             "hook_event_name": "SessionStart", "permission_mode": "default"}
    assert hooks.as_claude_code({**start, "source": "fork"}) == {**start, "source": "resume"}
    for source in ("startup", "resume", "clear", "compact"):
        assert hooks.as_claude_code({**start, "source": source})["source"] == source
    bash = {"session_id": "s1", "tool_name": "Bash", "tool_input": {"command": "ls"},
            "tool_use_id": "call_1"}
    assert hooks.as_claude_code(bash) == bash
    spawn = hooks.as_claude_code({"session_id": "s1", "tool_name": "spawn_agent",
                                  "tool_input": {"message": "review it"}})
    assert spawn["tool_name"] == "Agent"
    assert spawn["tool_input"] == {"subagent_type": "general-purpose", "prompt": "review it",
                                   "description": "review it"}


def _line(kind: str, payload: dict) -> str:
    return json.dumps({"timestamp": "t", "type": kind, "payload": payload}) + "\n"


def test_the_newest_usage_record_and_window_of_a_rollout(tmp_path):
    path = tmp_path / "rollout.jsonl"
    assert hooks.latest_usage(str(path)) is None          # no file yet
    assert hooks.latest_usage(None) is None
    path.write_text(_line("session_meta", {"id": "s1"})
                    + _line("event_msg", {"type": "task_started",
                                          "model_context_window": 100_000}))
    assert hooks.latest_usage(str(path)) is None          # no response yet
    with path.open("a") as fh:
        fh.write(_line("token_usage_record", {"usage": {"input_tokens": 30_000}}))
    assert hooks.latest_usage(str(path)) == (30_000, 100_000)   # the turn's window
    with path.open("a") as fh:
        fh.write(_line("event_msg", {"type": "token_count",
                                     "info": {"model_context_window": 258_400}}))
        fh.write("not json\n")
        fh.write(_line("token_usage_record", {"usage": {"input_tokens": 61_000}}))
    assert hooks.latest_usage(str(path)) == (61_000, 258_400)


def test_only_the_tail_is_read_and_a_cut_first_line_is_skipped(tmp_path):
    path = tmp_path / "rollout.jsonl"
    big = _line("response_item", {"type": "message", "text": "x" * hooks.TAIL})
    path.write_text(_line("token_usage_record", {"usage": {"input_tokens": 1}}) + big
                    + _line("token_usage_record", {"usage": {"input_tokens": 2}}))
    assert hooks.latest_usage(str(path)) == (2, None)


def test_the_context_is_measured_against_the_policy_else_the_rollouts_window(tmp_path):
    path = tmp_path / "rollout.jsonl"
    path.write_text(_line("event_msg", {"type": "task_started", "model_context_window": 200_000})
                    + _line("token_usage_record", {"usage": {"input_tokens": 150_000}}))
    assert hooks.measure(str(path)) == (75.0, 150_000, 200_000)
    assert hooks.measure(str(path), 1_000_000) == (15.0, 150_000, 1_000_000)
    path.write_text(_line("token_usage_record", {"usage": {"input_tokens": 300_000}}))
    assert hooks.measure(str(path)) is None                  # no window known
    assert hooks.measure(str(path), None, "claude-sonnet-4") == (100.0, 300_000, 200_000)


def test_a_sub_agent_of_codexs_default_kind_is_the_spawn_guards_general_purpose():
    start = {"session_id": "s1", "agent_id": "a1", "agent_type": "default"}
    assert hooks.as_claude_code(start)["agent_type"] == "general-purpose"
    assert hooks.as_claude_code({**start, "agent_type": "worker"})["agent_type"] == "worker"
