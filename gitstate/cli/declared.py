"""Each command that has more than one face, declared once: its parameters with their help,
its help, its `--json` model, its data function and printer (for the views). From this the
click command is made (`cli/app.py` `declared`), the fast path's forms (`cli/fast.py`) and the
MCP tool (`mcp/server.py`). Plain data, nothing imported: the fast path reads it before
anything else is loaded.

A `Param` is an argument when it has no flags, else an option spelled by its flags; `faces`
says which faces take it ("cli", "tool" or both), `tool_default` where the tool's default
differs from the command line's (a tool's `push` lands by default).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SAME = object()   # the tool's default is the command line's


class Param:
    """One parameter of a command: `name` is its name in Python (the click parameter, the
    tool's argument unless gitstate/mcp/strict.py publishes it under another)."""

    __slots__ = ("name", "flags", "help", "kind", "default", "required", "metavar", "least",
                 "complete", "faces", "tool_default", "click")

    def __init__(self, name: str, help: str, *flags: str, kind: type = str,
                 default: Any = None, required: bool = False, metavar: str | None = None,
                 least: float | None = None, complete: str | None = None,
                 faces: str = "cli tool", tool_default: Any = SAME,
                 click: dict | None = None) -> None:
        self.name, self.help, self.flags, self.kind = name, help, flags, kind
        self.default = False if kind is bool and default is None else default
        self.required, self.metavar, self.least = required, metavar, least
        self.complete, self.faces, self.click = complete, faces.split(), click or {}
        self.tool_default = self.default if tool_default is SAME else tool_default

    def but(self, **changed: Any) -> Param:
        """This parameter with some of its declaration changed (e.g. another help)."""
        other = object.__new__(Param)
        for key in self.__slots__:
            setattr(other, key, getattr(self, key))
        for key, value in changed.items():
            setattr(other, key, value)
        return other


class Command:
    """One command: `help` (its first line the tool's summary too), its parameters in
    order, the model of its `--json` (gitstate.schema.models), `examples` for `--help`,
    `hint` what a tool tells a client (read, move, once, ends, sweep); a view also declares
    `data` (module:function called with its parameters by name), `printer` (a function of
    cli/text.py, given `printed` of the parameters) and `fast` (the parameters the fast path
    takes); a move its `data` and `printer` (cli/fast_moves.py makes it without click)."""

    __slots__ = ("name", "help", "params", "model", "examples", "hint", "data", "printer",
                 "printed", "fast", "faces")

    def __init__(self, name: str, help: str, *params: Param, model: str, examples: tuple = (),
                 hint: str = "read", data: str | None = None, printer: str | None = None,
                 printed: tuple = (), fast: tuple | None = None,
                 faces: str = "cli tool") -> None:
        self.name, self.help, self.params, self.model = name, help, params, model
        self.examples, self.hint, self.data = examples, hint, data
        self.printer, self.printed, self.fast = printer, printed, fast
        self.faces = faces.split()

    def of(self, face: str) -> list[Param]:
        """The parameters `face` ("cli" or "tool") takes, in order."""
        return [p for p in self.params if face in p.faces]


# -- parameters several commands share ------------------------------------------------------

AGENT = Param("agent", "The agent's id (lower case letters, digits, '-', '_').",
              required=True, complete="agent")
SOME_AGENT = AGENT.but(help="An agent's id; none: every agent.", required=False)
AT = Param("at", "As it was at a commit, or at a date (time travel; default: HEAD).", "--at",
           metavar="REV|DATE")
MESSAGE = Param("message", "Text of the commit subject.", "-m", "--message")
SETS = Param("sets", "Set a front-matter key (KEY=VALUE, several times).", "--set", kind=list,
             metavar="KEY=VALUE")
PUSH = Param("push", "Land the move on the team line, the upstream branch (fetch, replay and "
             "retry when another agent got there first); the result's `push` says how it "
             "landed (a tool lands by default, where the upstream is a hub's branch).", "--push",
             kind=bool, tool_default=True)
APPROVED = Param("approved_by", "The human (one of the lifecycle's `humans`) who approved a "
                 "gated move (trailer `Approved-by:`).", "--approved-by", metavar="HUMAN")
ROLE = Param("role", "The role this agent holds.", "--role", complete="role")
STATE = Param("state", "The state to move to.", required=True, complete="state")
NO_SQLITE = Param("no_sqlite", "Only print the graph (do not write it to SQLite).",
                  "--no-sqlite", kind=bool, faces="cli")

VIEWS = "gitstate.history.views"
MOVED = "gitstate.moves.commands"   # the moves' data functions (cli/fast_moves.py)


def _view(name: str, help: str, *params: Param, model: str, data: str, printer: str,
          examples: tuple, printed: tuple = ()) -> Command:
    """A read of the history, as of a moment, answered by the fast path too."""
    return Command(name, help, *params, model=model, examples=examples, data=data,
                   printer=printer, printed=printed, fast=tuple(p.name for p in params))


_AS_OF = ("gitstate {0}", "gitstate {0} --json", "gitstate {0} --at 2026-11-01")

DECLARED = {c.name: c for c in (
    _view("status", "Current state, mortality phase and legal next states (of AGENT, or of "
          "everyone).", SOME_AGENT, AT, model="Status", data="gitstate.history.status:status",
          printer="print_status_view", printed=("agent",),
          examples=("gitstate status", "gitstate status alice --json",
                    "gitstate status --at HEAD~10")),
    _view("vacancies", "Roles whose holders froze or died, and roles never filled.", AT,
          model="Vacancies", data=f"{VIEWS}:vacant_roles", printer="print_vacancies",
          examples=tuple(e.format("vacancies") for e in _AS_OF)),
    _view("log", "Transition history (of AGENT, or of everyone), oldest first.", SOME_AGENT,
          Param("limit", "Only the N newest moves.", "--limit", "-n", kind=int, least=0,
                metavar="N"),
          Param("since", "Only moves committed since DATE, as git reads one (2026-11-01, "
                "'2 days ago', yesterday).", "--since", metavar="DATE"),
          Param("newest_first", "Newest first (the default is oldest first, the order they "
                "happened in).", "--newest-first", "--reverse", kind=bool),
          AT, model="TransitionLog", data=f"{VIEWS}:log_rows", printer="print_log",
          printed=("since", "limit"),
          examples=("gitstate log alice", "gitstate log -n 20 --newest-first",
                    "gitstate log --since yesterday --json", "gitstate log --at v1.0")),
    _view("board", "The board: notices derived from history (freezes with their wake "
          "condition, wakes, deaths, roles handed over, assumed or left vacant), oldest "
          "first.", SOME_AGENT,
          Param("limit", "Only the N newest notices.", "--limit", "-n", kind=int, least=0,
                metavar="N"),
          Param("since", "Only notices committed since DATE, as git reads one (2026-11-01, "
                "'2 days ago', yesterday).", "--since", metavar="DATE"),
          AT, model="Board", data="gitstate.history.board:board", printer="print_board",
          printed=("since", "limit"),
          examples=("gitstate board", "gitstate board -n 10 --json",
                    "gitstate board carol --since yesterday")),
    _view("show", "Print a frozen AGENT's freeze-state: ask it without waking it.", AGENT, AT,
          model="FreezeState", data=f"{VIEWS}:freeze_state", printer="print_freeze_state",
          printed=("repo",),
          examples=("gitstate show carol", "gitstate show carol --at HEAD~5 --json")),
    _view("situations", "The entity graph of agent sessions, from history; written to SQLite "
          "too (not by the tool).",
          Param("sqlite_path", "Also upsert the graph into this SQLite file (default: "
                "entities.db in the clone's .git/gitstate, outside the work tree).", "--sqlite",
                metavar="PATH", faces="cli"),
          NO_SQLITE, AT, model="Situations", data="gitstate.history.entities:situations",
          printer="print_situations",
          examples=("gitstate situations --no-sqlite",
                    "gitstate situations --sqlite graph.db --json")),
    Command("roster", "Living, freezer and cemetery, derived from git history.", AT,
            Param("watch", "Redraw whenever the team line moves, trouble first (Ctrl-C "
                  "stops); with --json, a line of JSON per redraw.", "--watch", kind=bool,
                  faces="cli"),
            Param("count", "With --watch: stop after N redraws (for scripts).", "--count",
                  kind=int, least=1, metavar="N", faces="cli"),
            Param("no_follow", "With --watch in a clone that tracks a hub: watch this clone's "
                  "branch (by default the hub's, fetched every 2 s).", "--no-follow",
                  kind=bool, faces="cli"),
            model="Roster", data=f"{VIEWS}:roster", printer="print_roster", fast=("at",),
            examples=(*(e.format("roster") for e in _AS_OF), "gitstate roster --watch",
                      "gitstate roster --watch --json")),
    Command("inbox", "Messages to AGENT (@AGENT or @ALL) since its last_read_commit.", AGENT,
            Param("mark_read", "Move the agent's last_read_commit to HEAD (a state commit).",
                  "--mark-read", kind=bool),
            PUSH, AT, model="Inbox", hint="once", data=f"{VIEWS}:inbox",
            printer="print_inbox", fast=("agent", "at"),
            examples=("gitstate inbox bob", "gitstate inbox bob --mark-read",
                      "gitstate inbox bob --at HEAD~3 --json")),
    Command("verify", "Replay history (default: all of HEAD's) through the hooks' rules; "
            "flag every commit that broke them, e.g. one made by a clone without gitstate's "
            "hooks.",
            Param("revs", "The range of commits to judge.", kind=list, metavar="[RANGE]",
                  faces="cli"),
            Param("no_cache", "Read nothing from .git/gitstate and write nothing there: judge "
                  "every commit again (for CI, audits).", "--no-cache", kind=bool,
                  tool_default=True),
            model="VerifyResult",
            examples=("gitstate verify", "gitstate verify --no-cache origin/main..HEAD")),
    Command("lifecycle", "Show (or draw) this repository's lifecycle: states, transitions, "
            "roles, policies.",
            Param("mermaid", "Draw it as a Mermaid state diagram.", "--mermaid", kind=bool,
                  faces="cli"),
            Param("preset", "Show a shipped preset instead of this repo's.", "--preset",
                  faces="cli"),
            model="LifecycleDoc", examples=("gitstate lifecycle", "gitstate lifecycle --mermaid",
                                            "gitstate lifecycle --preset era --json")),
    Command("check", "Validate the lifecycle and every state file in the work tree.",
            model="CheckResult", examples=("gitstate check", "gitstate check --json")),
    Command("doctor", "Is this clone protected? Hooks active and unmodified, gitstate found, "
            "caches sane, approvals authenticated, hub, CI and the agent runtime's hooks.",
            model="DoctorResult", examples=("gitstate doctor", "gitstate doctor --json")),
    Command("spawn", "Register AGENT in the initial state (one commit).", AGENT, ROLE,
            Param("new_role", "The role is a new one, not declared by the lifecycle (where "
                  "custom roles are allowed): trailer `New-role: ROLE`. Without it a role the "
                  "lifecycle does not declare is refused, so a typo never becomes a role.",
                  "--new-role", kind=bool),
            Param("model", "The model behind the agent.", "--model"),
            Param("parent", "The agent that spawned this one.", "--parent"),
            Param("session", "The agent runtime's session id (recorded as `session:`; the "
                  "runtime's hooks bind that session to this agent).", "--session",
                  metavar="ID"),
            Param("task", "What the agent is for (kept as `task:`).", "--task", faces="cli"),
            Param("instructions", "Its full instructions (`instructions:`).",
                  "--instructions", faces="cli"),
            Param("wait", "If the pool is full (max_living), wait up to SECONDS for a free "
                  "slot.", "--wait", kind=float, least=0, metavar="SECONDS", faces="cli"),
            Param("key", "Give the agent a key: its moves must then be signed (`new`, or a "
                  "bare `--key`: make one, kept in ~/.config/gitstate/keys; or an SSH public "
                  "key or .pub file).", "--key", metavar="PUBKEY",
                  click={"is_flag": False, "flag_value": "new"}),
            SETS, MESSAGE, PUSH, model="Move", hint="move",
            data=f"{MOVED}:spawn", printer="print_move",
            examples=("gitstate spawn alice --role architect --model opus-4-6",
                      "gitstate spawn bob --parent alice --task 'index the docs' --json")),
    Command("transition", "Move AGENT to STATE: one atomic commit of its state file and "
            "whatever is staged (a tool: the `paths` it names).", AGENT, STATE, MESSAGE,
            Param("body", "A longer commit body (may @mention agents).", "--body", default=""),
            SETS, APPROVED,
            Param("paths", "Files of the work tree to commit with the move, by their path "
                  "from the repository's top. Nothing else staged is committed: a move is "
                  "refused while the index holds changes it does not name.", kind=list,
                  faces="tool"),
            PUSH, model="Move", hint="move",
            data=f"{MOVED}:transition", printer="print_move",
            examples=("gitstate transition alice inbox -m 'restored from a cold start'",
                      "gitstate transition alice deep_work --set context_pct=40 --body "
                      "'@bob review please'")),
    Command("freeze", "Freeze AGENT: write (or check) data/freeze-states/AGENT.md and freeze, "
            "in one commit.\n\nIf the file exists it must have all its sections and a "
            "`wake_if`; if not, the template is written with the agent's role and thread "
            "filled in (edit it and commit it as a progress update later). The freeze stamps "
            "`frozen_at` and posts the seed's line in the commit's body: 'Frozen at X% "
            "context. Freeze-state at PATH. Working on SITUATION. Wake me if CONDITION.'",
            AGENT, MESSAGE,
            Param("situation", "primary_situation for a new freeze-state.", "--situation"),
            Param("wake_if", "The condition to wake AGENT on, written as the freeze-state's "
                  "`wake_if` (required to freeze: given here or in the file).", "--wake-if",
                  metavar="TEXT"),
            SETS, PUSH, model="Move", hint="move",
            data=f"{MOVED}:freeze", printer="print_move",
            examples=("gitstate freeze alice       # writes data/freeze-states/alice.md to "
                      "fill in first", "gitstate freeze alice -m 'paused for the night' "
                      "--wake-if 'the hub is back'")),
    Command("wake", "Resume a frozen AGENT; a human's decision (Approved-by).", AGENT,
            APPROVED.but(help="The human (one of the lifecycle's `humans`) who decided to "
                         "wake it.", required=True),
            Param("state", "Where to wake it to (default: the first living state the "
                  "lifecycle allows).", "--state"),
            MESSAGE, PUSH, model="Move", hint="move",
            data=f"{MOVED}:wake", printer="print_move",
            examples=("gitstate wake alice --approved-by zach",)),
    Command("bury", "AGENT dies with a final summary; says so when its role falls vacant.",
            AGENT, Param("summary", "The final summary (required to die).", "--summary",
                         required=True),
            APPROVED.but(help="Needed when the move is gated (e.g. burying a frozen agent in "
                         "haak)."),
            Param("transfer_role_to", "Hand the role to this agent in the same commit (no "
                  "vacancy, never two holders).", "--transfer-role-to", metavar="ID2"),
            MESSAGE, PUSH, model="Burial", hint="ends", data=f"{MOVED}:bury",
            printer="print_move",
            examples=("gitstate bury bob --summary 'indexed the docs' --approved-by zach",)),
    Command("handover", "A holder of ROLE hands it to another agent in one commit and keeps "
            "working without it (trailer `Role-transfer: ROLE -> ID`): the role is never "
            "vacant nor held twice.",
            ROLE.but(help="The role handed over.", flags=(), required=True),
            Param("to", "The agent that takes the role.", "--to", required=True, metavar="ID",
                  complete="agent"),
            Param("giver", "The holder that gives it (default: the one living holder).",
                  "--from", metavar="ID", complete="agent"),
            MESSAGE,
            APPROVED.but(help="Needed when the giver or the taker is frozen (haak): every "
                         "change to a frozen agent is a human's decision.", faces=["cli"]),
            PUSH, model="Move", hint="move",
            data=f"{MOVED}:handover", printer="print_move",
            examples=("gitstate handover architect --to dave -m 'going on leave'",)),
    Command("assume", "AGENT, living and without a role, takes the vacant ROLE in one commit "
            "(trailer `Assumes-role: ROLE`); refused while another living agent holds it.",
            AGENT, ROLE.but(flags=(), required=True),
            Param("new_role", "The role is a new one, not declared by the lifecycle (where "
                  "custom roles are allowed): trailer `New-role: ROLE`, as at a spawn. "
                  "Without it a role the lifecycle does not declare is refused, so a typo "
                  "never becomes a role.", "--new-role", kind=bool),
            MESSAGE, PUSH, model="Move", hint="move",
            data=f"{MOVED}:assume", printer="print_move", faces="cli",
            examples=("gitstate assume dave architect -m 'the architect role was vacant'",)),
    Command("logout", "Log AGENT out: append its note to the lifecycle's log (era: "
            "logout.log) and move to the logout state, in one commit.", AGENT,
            Param("note", "One line for the shared log: where you stopped.", "--note",
                  required=True),
            SETS, MESSAGE, PUSH, model="Move", hint="move",
            data=f"{MOVED}:logout", printer="print_move",
            examples=("gitstate logout era-1 --note 'parser half done; read docs/parser.md'",)),
    Command("say", "Send MESSAGE to each TARGET (an agent's id, several, or ALL) in one commit "
            "that changes no file: `to @ana: MESSAGE`, read by `gitstate inbox ana`. From an "
            "agent's session it says who speaks: `@bob: to @ana: MESSAGE`. MESSAGE `-` is "
            "read from stdin; its first line is the subject, the rest the body. Nothing "
            "staged is taken.",
            Param("to", "The agents it speaks to, by id (several, or ALL for every agent).",
                  kind=list, required=True, metavar="TARGET...", complete="agent"),
            Param("message", "What to say: the first line is the commit's subject, the rest "
                  "its body; it may @mention other agents.", required=True,
                  metavar="MESSAGE"),
            PUSH.but(faces=["cli"]), model="Said", hint="move",
            data="gitstate.moves.say:say", printer="print_said",
            examples=("gitstate say ana 'please rebase on main'",
                      "gitstate say ALL 'the hub moves to a new host at noon' --push",
                      "gitstate say ana bob - < notes.txt      # the first line is the "
                      "subject")),
    Command("sync", "Get back in step with the hub: replay this branch's unlanded moves (and "
            "those kept on gitstate/unlanded/* branches) onto the upstream tip, deciding each "
            "again from the new state, and land them; what cannot land is kept on a side "
            "branch, with why. A rebase or merge left waiting is aborted first.",
            Param("push", "Land each replayed move on the hub (default), or only replay them "
                  "here (--no-push).", "--push/--no-push", kind=bool, default=True),
            model="SyncResult", hint="once",
            examples=("gitstate sync", "gitstate sync --no-push --json")),
    Command("await", "Block until every AGENT reaches a terminal state, printing each change "
            "as it lands (with --json: only the end). Exit 0 when all succeeded, 1 if any "
            "failed, 124 on timeout.",
            Param("agents", "The agents to wait for.", kind=list, required=True,
                  complete="agent"),
            Param("timeout", "Give up after this many seconds (exit 124).", "--timeout",
                  kind=float, metavar="SECONDS", tool_default=60.0),
            model="OperationLog",
            examples=("gitstate await alice bob --timeout 600", "gitstate await alice --json")),
    Command("sweep", "Commit every timed transition that is due (e.g. idle -> suspended after "
            "30m), as the system; each landed as it is made with --push. The hooks accept "
            "such a move only once it is due.",
            Param("dry_run", "Only list the timed transitions that are due.", "--dry-run",
                  kind=bool),
            PUSH, model="SweepResult", hint="sweep",
            examples=("gitstate sweep --dry-run", "gitstate sweep --push")),
    Command("reap", "Mark as failed every living agent of this host whose process (pid) is "
            "gone, and every working agent without a pid on this host whose last state "
            "commit is older than `policies.heartbeat` (squad: an idle session waits by "
            "design; `sweep` suspends it).",
            Param("host", "Which host's agents to check (default: this one).", "--host"),
            Param("every", "Keep checking, every DURATION (e.g. 5s): a health monitor.",
                  "--every", metavar="DURATION", faces="cli"),
            Param("count", "With --every: stop after this many rounds.", "--count", kind=int,
                  least=1, faces="cli"),
            PUSH, model="OperationLog", hint="ends",
            examples=("gitstate reap", "gitstate reap --every 30s --push")),
    Command("shutdown", "Move every living agent to a frozen or terminal state, children "
            "before parents; an agent's recorded process on this host is stopped first "
            "(SIGTERM, then SIGKILL).",
            APPROVED.but(help="For agents whose way to rest passes a gated move."),
            Param("grace", "How long a process sent SIGTERM has to end before SIGKILL.",
                  "--grace", kind=float, default=10.0, least=0, metavar="SECONDS",
                  faces="cli", click={"show_default": True}),
            PUSH, model="OperationLog", hint="ends",
            examples=("gitstate shutdown --approved-by zach", "gitstate shutdown --json")),
)}


# a tool's or an option's name -> the name the move's function (gitstate/moves/commands.py)
# takes it by
_DATA_NAMES = {"message": "text", "transfer_role_to": "transfer_to"}


def data_args(args: dict) -> dict:
    """A move's parameters as its function in gitstate/moves/commands.py takes them."""
    return {_DATA_NAMES.get(k, k): tuple(v or ()) if k == "sets" else v
            for k, v in args.items()}


def view_data(command: Command, repo: Any, params: dict) -> Any:
    """A view's data: its `data` function called with the parameters it takes."""
    import importlib
    module, function = (command.data or "").split(":")
    found = getattr(importlib.import_module(module), function)
    return found(repo, **{k: params[k] for k in command.fast or ()})


def print_view(command: Command, data: Any, params: dict, repo: Any) -> None:
    """A view's data printed for a person, by its printer of cli/text.py."""
    from gitstate.cli import text
    given = {**params, "repo": repo}
    getattr(text, command.printer or "")(data, **{k: given[k] for k in command.printed})


def fast_form(command: Command) -> tuple[int, int, dict[str, str], dict[str, str]]:
    """(fewest, most AGENT arguments, {option taking a value: its parameter}, {flag: its
    parameter}) of a view's form the fast path takes."""
    taken = [p for p in command.params if p.name in (command.fast or ())]
    agents = [p for p in taken if not p.flags]
    return sum(p.required for p in agents), len(agents), _spelled(taken, False), \
        _spelled(taken, True)


def _spelled(params: list[Param], flags: bool) -> dict[str, str]:
    """{each spelling of the options (`flags`: the flags) among `params`: its parameter}."""
    return {f: p.name for p in params if (p.kind is bool) == flags for f in p.flags}
