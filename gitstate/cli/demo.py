"""`gitstate demo`: a short multi-agent story, told through the real commands and hooks."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import click

from gitstate.cli.app import cli, example
from gitstate.cli.main import main
from gitstate.git.runner import Git
from gitstate.law.load import load_lifecycle
from gitstate.moves.operations import _path_to_rest
from gitstate.resources import install_extra, preset_dir


class _Story:
    def __init__(self, repo: Path):
        self.repo = repo
        self.git = Git(repo)
        self.failures: list[str] = []

    def say(self, text: str) -> None:
        click.echo("")
        click.secho(f"# {text}", fg="cyan")

    def gitstate(self, *args, expect: int = 0, **options) -> int:
        """Show the command line, then run it, in this process, as `gitstate` runs it."""
        argv = [*_words(args), *_flags(options)]
        click.secho(f"$ gitstate {' '.join(_quote(a) for a in argv)}", bold=True)
        code = main(["-C", str(self.repo), *argv])
        if code != expect:
            self.failures.append(f"`gitstate {' '.join(argv)}` exited {code}, expected {expect}")
        return code

    def shell(self, *cmd: str, expect: int = 0) -> int:
        click.secho(f"$ {' '.join(_quote(a) for a in cmd)}", bold=True)
        proc = subprocess.run(cmd, cwd=self.repo, capture_output=True, text=True)
        for stream in (proc.stdout, proc.stderr):
            if stream.strip():
                click.echo(stream.rstrip())
        if proc.returncode != expect:
            self.failures.append(f"`{' '.join(cmd)}` exited {proc.returncode}, expected {expect}")
        return proc.returncode

    def write(self, rel: str, text: str) -> None:
        path = self.repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


_FLAGS = {"text": "-m", "sets": "--set", "transfer_to": "--transfer-role-to"}


def _words(args: tuple) -> list[str]:
    return [str(w) for a in args for w in (a if isinstance(a, (list, tuple)) else [a])]


def _flags(options: dict) -> list[str]:
    """The command-line flags that say what `options` say."""
    out: list[str] = []
    for key, value in options.items():
        flag = _FLAGS.get(key, "--" + key.replace("_", "-"))
        if value is True:
            out.append(flag)
        elif isinstance(value, (list, tuple)):
            for item in value:
                out += [flag, str(item)]
        elif value is not None:
            out += [flag, str(value)]
    return out


def _quote(arg: str) -> str:
    return f'"{arg}"' if any(c in arg for c in " @;'") else arg


def run_demo(directory: str | None = None, preset: str | None = None) -> int:
    repo = Path(directory) if directory else Path(tempfile.mkdtemp(prefix="gitstate-demo-"))
    repo.mkdir(parents=True, exist_ok=True)
    if any(repo.iterdir()):
        click.echo(f"gitstate demo: {repo} is not empty; give an empty or new folder", err=True)
        return 2
    env_git = Git(repo)
    env_git.run("init", "-q", "-b", "main")
    for key, value in (("user.name", "gitstate demo"), ("user.email", "demo@gitstate.invalid"),
                       ("commit.gpgsign", "false")):
        env_git.run("config", key, value)
    os.environ.pop("GIT_INDEX_FILE", None)
    s = _Story(repo)
    click.secho(f"gitstate demo in {repo}", bold=True)
    if preset not in (None, "haak"):
        _preset_story(s, preset)
    else:
        for part in (_haak_births, _haak_refusal, _haak_freeze, _haak_endings):
            part(s)
    return _ending(s, repo)


def _haak_births(s: _Story) -> None:
    """haak: the repository managed, three agents born, alice's work in her move."""
    s.say("Make the repository managed: the lifecycle 'haak', its protocols, the hooks.")
    s.gitstate("init", human="zach")

    s.say("Three agents are born, each in the initial state, each in one commit.")
    s.gitstate("spawn", "alice", role="architect", model="opus-4-6",
               sets=["person=zach", "project=haak"])
    s.gitstate("spawn", "bob", role="librarian", sets=["person=zach"])
    s.gitstate("spawn", "carol", role="steward", sets=["person=zach"])

    s.say("alice works through the loop; her design lands in the same commit as her state,\n"
          "# and @bob in the message is a message to bob.")
    s.gitstate("transition", "alice", "inbox", text="restored from a cold start")
    s.gitstate("transition", "alice", "distill", text="nothing in the inbox")
    s.write("docs/design.md", "# Roster fold\n\nFold tagged commits into a roster.\n")
    s.shell("git", "add", "docs/design.md")
    s.gitstate("transition", "alice", "deep_work",
               text="roster: design drafted", sets=["thread=roster-fold", "context_pct=40"],
               body="@bob please index docs/design.md")


def _haak_refusal(s: _Story) -> None:
    """haak: a move by hand the hook refuses, then the legal path."""
    s.say("bob tries to skip ahead by editing his state file and committing by hand.\n"
          "# The pre-commit hook refuses, and says what would be legal.")
    s.gitstate("transition", "bob", "inbox", text="restored")
    state = s.repo / "agent" / "bob" / "_state.md"
    state.write_text(state.read_text(encoding="utf-8").replace("state: inbox", "state: deep_work"),
                     encoding="utf-8")
    s.shell("git", "commit", "-q", "-am", "@bob: [STATE:deep_work] skipping the distill step",
            expect=1)
    s.say("Nothing was committed; bob's edit is still in his work tree. He takes the legal path.")
    s.shell("git", "status", "--short")
    s.shell("git", "checkout", "--", "agent/bob/_state.md")
    s.gitstate("transition", "bob", "distill", text="reading alice's design")


def _haak_freeze(s: _Story) -> None:
    """haak: the context's thresholds, a freeze-state written, a wake refused."""
    s.say("carol works long: when her context crosses a threshold, the move says what the\n"
          "# phase asks. At urgent she freezes from where she stands, in one commit.")
    s.gitstate("transition", "carol", "inbox", text="restored")
    s.gitstate("transition", "carol", "distill", text="planning")
    s.gitstate("transition", "carol", "deep_work", text="migrating", sets=["context_pct=60"])
    s.gitstate("transition", "carol", "deep_work", text="still migrating", sets=["context_pct=91"])
    s.say("A freeze-state of placeholders would answer nobody: the first `freeze` writes the\n"
          "# template and refuses; carol writes what she knows, then freezes, saying when to\n"
          "# wake her (the commit's body carries her board post).")
    s.gitstate("freeze", "carol", expect=1, situation="the schema migration")
    fs = s.repo / "data" / "freeze-states" / "carol.md"
    written = iter(["- migrate in place, not by copy: the store is too big to copy",
                    "The old schema's dates are local time; the new one's are UTC.",
                    "- who owns the archive tables?", "- docs/migration.md: the plan",
                    "Half done: tables a-m are migrated; resume at n."])
    s.write("data/freeze-states/carol.md", "".join(
        next(written) + "\n" if ln.startswith(("(", "- (")) else ln
        for ln in fs.read_text(encoding="utf-8").splitlines(keepends=True)))
    s.gitstate("freeze", "carol", wake_if="someone owns the archive tables")
    s.gitstate("show", "carol")
    s.say("Waking a frozen agent is a human's call: without approval it is refused.")
    s.gitstate("transition", "carol", "bootstrap", text="waking myself", expect=1)


def _haak_endings(s: _Story) -> None:
    """haak: a hand-over, a burial, and what history then says."""
    s.say("alice hands her role to dan in one commit (never vacant, never held twice),\n"
          "# then dies from where she stands, leaving a final summary.")
    s.gitstate("spawn", "dan", sets=["person=zach"])
    s.gitstate("handover", "architect", to="dan")
    s.gitstate("bury", "alice", summary="Designed the roster fold; see docs/design.md")

    s.say("Everything else is derived from git log: the roster (living, freezer, cemetery),\n"
          "# the roles that fell vacant, the board's notices, and what is waiting in bob's inbox.")
    s.gitstate("roster")
    s.gitstate("vacancies")
    s.gitstate("board")
    s.gitstate("situations", no_sqlite=True)
    s.gitstate("inbox", "bob")
    s.say("And every commit in the history followed the law (hooks or not):")
    s.gitstate("verify")
    s.shell("git", "log", "--oneline", "-8")


def _ending(s: _Story, repo: Path) -> int:
    click.echo("")
    if s.failures:
        click.secho("The demo did not go as scripted:", fg="red", err=True)
        for f in s.failures:
            click.echo(f"  {f}", err=True)
        return 1
    click.secho(f"Done. Explore it: cd {repo} && git log --stat", bold=True)
    click.echo(f"See it in a browser: gitstate -C {repo} serve  "
               f"(pip install {install_extra('web')}), or as files: gitstate -C {repo} site "
               "--out DIR")
    return 0


def _hand_edit(s: _Story, agent: str, state: str) -> None:
    path = s.repo / "agent" / agent / "_state.md"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(f"state: {state}\n" if ln.startswith("state:") else ln
                            for ln in lines), encoding="utf-8")


def _preset_story(s: _Story, preset: str) -> None:
    """The story of each other preset: its lifecycle walked end to end, and its own law."""
    lc = load_lifecycle((preset_dir(preset) / "lifecycle.yaml").read_text(encoding="utf-8"))
    s.say(f"Make the repository managed with the preset '{preset}': {lc.description}.")
    s.gitstate("init", lifecycle=preset, human="zach")
    s.gitstate("lifecycle")
    assert lc.initial is not None   # a loaded lifecycle has one (law/checks.py)
    roles = list(lc.roles)
    s.say("Two agents are born in the initial state.")
    s.gitstate("spawn", "ada", role=roles[0] if roles else None)
    s.gitstate("spawn", "ben", role=roles[1] if len(roles) > 1 else None)

    _walk_to_rest(s, lc)
    _refused_by_hand(s, lc)
    if preset in PRESET_STORIES:
        PRESET_STORIES[preset](s, roles)
    s.say("The roster, the vacant roles, and a check of the whole history.")
    s.gitstate("roster")
    s.gitstate("vacancies")
    s.gitstate("verify")


def _walk_to_rest(s: _Story, lc) -> None:
    """ada walks the lifecycle from its initial state to rest, each step by its command."""
    path = _path_to_rest(lc, lc.initial) or []
    s.say(f"ada walks her lifecycle to rest: {' -> '.join([lc.initial] + path)}.")
    for step in path:
        spec = lc.states[step]
        if spec.roster == "frozen" and "freeze_state" in spec.requires:
            s.gitstate("freeze", "ada")
        elif spec.log:
            s.gitstate("logout", "ada", note="all done; start from the roster")
        elif "final_summary" in spec.requires:
            s.gitstate("bury", "ada", summary="all done")
        else:
            s.gitstate("transition", "ada", step, text=f"on to {step}")


def _refused_by_hand(s: _Story, lc) -> None:
    """A state file edited by hand to a move the lifecycle does not allow: refused."""
    illegal = next((t for t in lc.states if t not in lc.allowed_from(lc.initial)), None)
    who, to = ("ben", illegal) if illegal else ("ada", lc.initial)
    s.say(f"{who} edits the state file by hand to go to '{to}'; the hook refuses.")
    _hand_edit(s, who, to)
    s.shell("git", "commit", "-q", "-am", f"@{who}: [STATE:{to}] by hand", expect=1)
    s.shell("git", "checkout", "--", f"agent/{who}/_state.md")


def _era_story(s: _Story, roles: list[str]) -> None:
    s.say("The seed's bootstrap commit tags the step just finished ([STATE:bootstrap] with\n"
          "# state: inbox); gitstate's tag names the state entered, so it is refused.")
    _hand_edit(s, "ben", "inbox")
    s.shell("git", "commit", "-q", "-am", "@ben: [STATE:bootstrap] Restored from abc123",
            expect=1)
    s.shell("git", "commit", "-q", "-am", "@ben: [STATE:inbox] Restored from abc123")
    s.gitstate("transition", "ben", "distill")
    s.gitstate("transition", "ben", "deep_work", sets=["thread=parser"])
    s.say("Thread transitions happen in distill: changed anywhere else, refused.")
    s.gitstate("transition", "ben", "deep_work", sets=["thread=other"], expect=1)
    s.say("The fourth wall: what the system measures (context, tokens, the budget) is written\n"
          "# by the runtime's hooks or a human, never by the agent's own session.")
    s.shell("env", "GITSTATE_AGENT=ben", sys.executable, "-m", "gitstate", "transition", "ben",
            "deep_work", "--set", "max_tokens=999999", expect=1)
    s.gitstate("transition", "ben", "deep_work", sets=["max_tokens=50000"], approved_by="zach")
    s.say("deep_work ends at the token limit: past max_tokens, staying is refused.")
    s.gitstate("transition", "ben", "deep_work", sets=["tokens=50000"], approved_by="zach",
               expect=1)
    s.gitstate("transition", "ben", "inbox", sets=["tokens=50000"], text="budget spent",
               approved_by="zach")
    s.gitstate("transition", "ben", "distill")
    s.gitstate("logout", "ben", note="parser half done")
    s.gitstate("transition", "ben", "bootstrap")
    s.say("In era every commit of an agent carries its state file: a bare note is refused.")
    s.write("notes.md", "ben's thoughts\n")
    s.shell("git", "add", "notes.md")
    s.shell("git", "commit", "-q", "-m", "@ben: some notes", expect=1)
    s.say("Nor can a working agent's unprefixed commit pass, when its runtime names it\n"
          "# (GITSTATE_AGENT=ben in the environment of `git commit`).")
    s.shell("git", "reset", "-q")
    s.gitstate("transition", "ben", "inbox")
    s.shell("git", "add", "notes.md")
    s.shell("env", "GITSTATE_AGENT=ben", "git", "commit", "-q", "-m", "Updated feature",
            expect=1)
    s.shell("git", "reset", "-q")
    s.say("idle goes back to inbox at the check interval (10m): `sweep` does it when due.")
    s.gitstate("transition", "ben", "distill")
    s.gitstate("transition", "ben", "idle")
    s.gitstate("sweep", dry_run=True)
    s.shell("cat", "logout.log")


def _registry_story(s: _Story, roles: list[str]) -> None:
    s.say("A programmer may not spawn another programmer, and depth is limited.")
    s.gitstate("spawn", "cal", parent="ben", role=roles[1], expect=1)
    s.gitstate("spawn", "cal", parent="ben", role="researcher")
    s.say("ada has ended (done): an agent that ended spawns no children.")
    s.gitstate("spawn", "dot", parent="ada", role="researcher", expect=1)
    s.say("The seed's log fields: what an agent is for, and when it started and ended.")
    s.gitstate("spawn", "eve", parent="ben", role="researcher",
               task="survey the parsers", instructions="List each parser and its tests.")
    s.gitstate("transition", "eve", "in-progress", text="three parsers found")
    s.gitstate("transition", "eve", "done", text="survey written")
    s.say("`await` reports every state commit of the agents it waits for, progress too\n"
          "# (here: already ended, so it says so at once).")
    s.gitstate("await", ["ada", "eve"], timeout=5)


def _squad_story(s: _Story, roles: list[str]) -> None:
    s.say("idle -> suspended is a timed move: before 30 minutes it is refused.")
    s.gitstate("transition", "ben", "active")
    s.gitstate("transition", "ben", "idle")
    s.gitstate("transition", "ben", "suspended", expect=1)
    s.gitstate("sweep")
    s.say("A crashed session goes to 'error' (no pool slot) and resumes from there.")
    s.gitstate("transition", "ben", "active", text="new work")
    s.gitstate("transition", "ben", "error",
               text="session.error: tool crashed", sets=["summary=tool crashed"])
    s.gitstate("transition", "ben", "active", text="resumed")
    s.say("Core sessions are made at team load, idle at once, and never suspended nor\n"
          "# reaped for silence; a full pool queues a spawn (`--wait`, bounded).")
    s.gitstate("team", "load", ["keaton", "ripley", "dallas", "hockney", "scribe"])
    s.gitstate("transition", "keaton", "suspended", expect=1)
    s.say("Specialists get a session per task, spawned on demand.")
    s.gitstate("spawn", "fenster", role="specialist", wait=2)
    s.say("A session is cleaned up with a summary of its history (`bury --summary`).")
    s.gitstate("transition", "ben", "idle")
    s.gitstate("transition", "ben", "cleanup", expect=1)
    s.gitstate("bury", "ben", summary="fixed the parser; two tool crashes, resumed")


def _maos_story(s: _Story, roles: list[str]) -> None:
    s.say(f"Role limits: a second {roles[0]} is refused while the first is living.")
    s.gitstate("spawn", "cy", role=roles[0])
    s.gitstate("spawn", "dee", role=roles[0], expect=1)
    s.say("A role the lifecycle does not declare is a typo until the spawn says it is new;\n"
          "# custom roles share a default limit (policies.role_max: 2).")
    s.gitstate("spawn", "dee", role="enginer", expect=1)
    s.gitstate("spawn", "dee", role="chemist", new_role=True)
    s.say("A health check: agents without a pid must commit within the heartbeat (10m).")
    s.gitstate("reap")
    s.say("Roles have timeouts (architect 30m, engineer 60m, others 40m): `sweep` ends an\n"
          "# agent past its role's as failed. None is due yet.")
    s.gitstate("sweep", dry_run=True)
    s.say("Shut everyone down in order: unfinished work ends 'cancelled', which\n"
          "# `await` counts as a failure.")
    s.gitstate("shutdown")
    s.gitstate("await", ["cy"], timeout=5, expect=1)


PRESET_STORIES = {"era": _era_story, "registry": _registry_story, "squad": _squad_story,
                  "maos": _maos_story}


@example('gitstate demo', 'gitstate demo --dir /tmp/story --preset maos')
@cli.command()
@click.option("--dir", "directory", default=None, type=click.Path(file_okay=False),
              help="Where to make the throwaway repository (default: a new temp folder).")
@click.option("--preset", default=None, help="Tell the story of this preset (default: haak).")
def demo(directory, preset):
    """Run a scripted multi-agent story in a throwaway repository and show the result."""
    if preset is not None:
        from gitstate.resources import preset_dir
        preset_dir(preset)   # a clear error for an unknown name
    return run_demo(directory, preset)
