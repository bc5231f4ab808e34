"""Codex CLI (npm `@openai/codex`; its native binary in `@openai/codex-<os>-<arch>`) as an agent
runtime. What follows was read from the binary of Codex 0.171.0 (its `--help`, the JSON Schemas
it embeds, `codex app-server generate-json-schema`) and checked by running it.

Hooks
  On by default. Read from `hooks.json` in `$CODEX_HOME` (user) and in a project's `.codex/`,
  or from `[hooks]` in the `config.toml` beside it (both in one layer load, with a warning).
  Same shape as Claude Code's: `{"hooks": {"<Event>": [{"matcher": "...", "hooks": [{"type":
  "command", "command": "...", "timeout": ...}]}]}}` (default timeout 600 s). Events:
  SessionStart, UserPromptSubmit, PreToolUse, PermissionRequest, PostToolUse, PreCompact,
  PostCompact, SubagentStart, SubagentStop, Stop, SessionEnd, Interrupt (the app-server also
  names preModelRequest and postModelRequest, with no command schema). A hook's key is
  `<source file>:<event in snake_case>:<group>:<handler>`, e.g.
  `/repo/.codex/hooks.json:session_start:0:0`.

  Input (stdin JSON; schemas `<event>.command.input`, no extra fields): every event has
  `session_id` (the thread id, a UUIDv7 that Codex makes; also `$CODEX_SESSION_ID` and
  `$CODEX_THREAD_ID` in the shell tool's commands, not in a hook's environment), `cwd`,
  `hook_event_name`, `transcript_path` (the rollout JSONL, or null); all but SessionEnd have
  `model`; most have `permission_mode` and `turn_id`. SessionStart: `source` in startup,
  resume, clear, compact, fork. PreToolUse/PermissionRequest/PostToolUse: `tool_name`,
  `tool_input`, `tool_use_id` (PostToolUse adds `tool_response`); the shell tool arrives as
  `tool_name: "Bash"`, `tool_input: {"command": "<the command line>"}`. SubagentStart and
  SubagentStop: `agent_id`, `agent_type` (SubagentStop adds `agent_transcript_path`,
  `last_assistant_message`, `stop_hook_active`). Stop: `last_assistant_message`,
  `stop_hook_active`. Pre/PostCompact: `trigger` (manual, auto). SessionEnd: `reason: "other"`.

  Output (stdout; schemas `<event>.command.output`): common `continue`, `stopReason`,
  `suppressOutput`, `systemMessage`. SessionStart, UserPromptSubmit, SubagentStart, PreToolUse
  and PostToolUse take `hookSpecificOutput.additionalContext`: it reaches the model as a
  developer message in the next request's `input`; a SessionStart hook's plain (non-JSON)
  stdout does too. PreToolUse refuses with `hookSpecificOutput.permissionDecision: "deny"` and
  `permissionDecisionReason` (also `decision: "block"`): the command does not run and the
  model reads `Command blocked by PreToolUse hook: <reason>. Command: <command>` as the call's
  output. PermissionRequest answers `hookSpecificOutput.decision.behavior` allow or deny.
  Stop, SubagentStop, UserPromptSubmit and PostToolUse take `decision: "block"` with `reason`.
  A hook's run shows only in the plain-text output on stderr (`hook: <Event>`, then
  `hook: <Event> Completed` or `Blocked`).

Trust
  A hook runs only when trusted: `[hooks.state."<key>"] trusted_hash = "<its currentHash>"`
  in the user's config.toml. A new hook, or one whose entry changed (the hash covers the
  hooks.json entry, not the script it runs), is skipped in `codex exec` without a word.
  Project config (its hooks, config.toml and exec policies) loads only in a trusted project:
  `[projects."<path>"] trust_level = "trusted"` (`codex exec --trust` saves it for the next
  session). Both are written without a person through `codex app-server` (JSON-RPC 2.0, one
  JSON object a line on stdio): `initialize` {clientInfo}, the `initialized` notification,
  `config/batchWrite` {edits: [{keyPath: "projects", mergeStrategy: "upsert", value:
  {"<path>": {"trust_level": "trusted"}}}]}, then `hooks/list` {cwds: [path]} (each hook's
  `key`, `currentHash`, `trustStatus`: untrusted, trusted, modified or managed), then
  `config/batchWrite` with keyPath "hooks.state" and value {"<key>": {"trusted_hash":
  "<currentHash>"}}. (A keyPath is dotted, so the keys, which hold dots, go in the value.)
  `codex exec --dangerously-bypass-hook-trust` runs untrusted hooks for one invocation.

Model API
  A `[model_providers.NAME]` with `base_url`, `wire_api = "responses"`, `env_key`; Codex
  sends `POST {base_url}/responses` with `stream: true` and reads server-sent events
  (`response.output_item.done`, `response.completed` with `usage`). No `instructions`: the
  system prompt, AGENTS.md, skills and hook context are developer/user messages in `input`. The
  shell tool is the function `exec_command` with arguments {"cmd": "...", "workdir",
  "login", "tty", "yield_time_ms", ...}; its result is a `function_call_output` whose text
  ends with `Output:\\n<output>`. Commands run as `/bin/bash -lc <cmd>` (a login shell, whose
  /etc/profile may reset PATH and lose a venv's gitstate) unless the call says `"login":
  false` or config.toml says `allow_login_shell = false` (then PATH is the one `codex exec`
  was given, after Codex's own `codex-path` folder), with `$CODEX_SESSION_ID`,
  `$CODEX_THREAD_ID`, `$CODEX_TOOL_CALL_ID` set. A 400 from the model is not retried: `codex
  exec` prints `ERROR: <body>` and exits 1. Sub-agents are the `multi_agent_v1` tool
  namespace (`spawn_agent`, `send_input`, `wait_agent`, `resume_agent`, `close_agent`); the
  model's call is a `function_call` with `"namespace": "multi_agent_v1"` and `name:
  "spawn_agent"`, arguments {"message", "items", "fork_context", "model",
  "reasoning_effort"} (no kind of agent). Its PreToolUse has `tool_name: "spawn_agent"` and
  the arguments as `tool_input`; a denial reads `Tool call blocked by PreToolUse hook:
  <reason>. Tool: spawn_agent`. Its SubagentStart has the parent's `session_id`,
  `agent_type: "default"`, the new `agent_id` and the child's own rollout as
  `transcript_path`. With a model it has no metadata for, Codex warns and takes a context
  window of 258,400 tokens.

Rollout (transcript_path)
  `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<session id>.jsonl`, one JSON object a line
  with `timestamp`, `ordinal`, `type`, `payload`: `session_meta` (id, cwd, cli_version, ...),
  `response_item` (the model's items), `event_msg`, `turn_context`, and per model response a
  `token_usage_record` (`payload.usage.input_tokens`: that request's input, the measure of
  the context; `turn_token_usage`, `thread_token_usage` sums); an `event_msg` of type
  `token_count` (`info.last_token_usage`, `info.total_token_usage`,
  `info.model_context_window`) follows, after the output of the calls that response made (a
  PostToolUse hook of the turn's first call finds none yet); each turn's `task_started`
  `event_msg` carries `model_context_window` too.

MCP
  `codex mcp add NAME [--env K=V] -- COMMAND ARGS...` writes `[mcp_servers.NAME]` `command`,
  `args` (and `[mcp_servers.NAME.env]`) into `$CODEX_HOME/config.toml`; a project's
  `.codex/config.toml` may hold the same table (loaded only when the project is trusted).
  The server starts in the session's folder, with few of Codex's environment variables
  (`env_vars = [NAMES]` passes more on); Codex gives it no session id. `codex exec` sends its
  first request without waiting for a server unless the server says `required = true`. The
  model sees a server's tools as a namespace `mcp__<server>` (its tools by their own names);
  its call is a `function_call` with `"namespace": "mcp__<server>"`.

Project config
  A trusted project's `.codex/config.toml` is read as the user's is: its top-level
  `allow_login_shell = false` holds for the model's commands. A hook's command runs with
  `/bin/bash -c` in the session's folder.

Sessions
  `codex exec` cannot be given a session id; `codex exec resume <id> PROMPT` continues one
  (its SessionStart has `source: "resume"`). The environment of `codex exec` reaches hooks and
  commands.
"""

CODEX_VERSION = "0.171.0"   # the version the facts above were read from
