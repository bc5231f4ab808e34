"""Gemini CLI's payloads mapped to Claude Code's, its answers mapped back, and the context
measured from its transcript (gitstate/runtime/gemini/hooks.py), without the binary."""

from __future__ import annotations

import json

from gitstate.runtime.gemini.hooks import as_claude_code, latest_usage, measure, reply


def test_the_sub_agent_and_shell_tools_and_the_turns_end_read_as_claude_codes():
    spawn = as_claude_code({"hook_event_name": "BeforeTool", "tool_name": "invoke_agent",
                            "tool_input": {"agent_name": "codebase_investigator",
                                           "prompt": "look around"}})
    assert spawn["tool_name"] == "Agent"
    assert spawn["tool_input"] == {"subagent_type": "codebase_investigator",
                                   "prompt": "look around", "description": "look around"}
    shell = as_claude_code({"tool_name": "run_shell_command", "tool_input": {"command": "ls"}})
    assert shell["tool_name"] == "Bash" and shell["tool_input"] == {"command": "ls"}
    stop = as_claude_code({"hook_event_name": "AfterAgent", "prompt_response": "all done"})
    assert stop["last_assistant_message"] == "all done"
    notice = as_claude_code({"notification_type": "ToolPermission", "message": "m"})
    assert notice["notification_type"] == "permission_prompt"
    assert as_claude_code({"tool_name": "read_file"})["tool_name"] == "read_file"


def test_a_refusal_is_geminis_deny_and_context_is_kept():
    denied = json.loads(reply(json.dumps({"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny",
        "permissionDecisionReason": "not as a sub-agent"}})))
    assert denied == {"decision": "deny", "reason": "not as a sub-agent"}
    context = {"hookSpecificOutput": {"hookEventName": "SessionStart",
                                      "additionalContext": "you are alice"}}
    assert json.loads(reply(json.dumps(context))) == context
    assert reply("") == "" and reply("plain words\n") == "plain words\n"


def test_the_context_is_the_newest_responses_input_tokens(tmp_path):
    path = tmp_path / "session.jsonl"
    lines = [{"sessionId": "s", "kind": "main"},
             {"id": "1", "type": "user", "content": [{"text": "hi"}]},
             {"id": "2", "type": "gemini", "content": "", "model": "gemini-2.5-flash",
              "tokens": {"input": 1000, "output": 10}},
             {"$set": {"lastUpdated": "now"}},
             {"id": "3", "type": "gemini", "content": "", "model": "gemini-2.5-flash",
              "tokens": {"input": 104857, "output": 10}},
             {"$set": {"lastUpdated": "later"}}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert latest_usage(str(path)) == (104857, "gemini-2.5-flash")
    assert measure(str(path)) == (10.0, 104857, 1_048_576)
    assert measure(str(path), policy_window=200_000) == (52.4, 104857, 200_000)
    assert measure(str(tmp_path / "none.jsonl")) is None
    path.write_text(json.dumps({"id": "2", "type": "gemini", "model": "other-model",
                                "tokens": {"input": 5}}) + "\n")
    assert measure(str(path)) is None       # no window known, none set
    # a line that is no response (a list naming both words): read past, never a traceback
    path.write_text(json.dumps(lines[2]) + "\n" + json.dumps(["gemini", "tokens"]) + "\n")
    assert latest_usage(str(path)) == (1000, "gemini-2.5-flash")
