"""`gitstate doctor`: whether this clone's doors hold, said plainly."""

from __future__ import annotations

import json

from conftest import git, gitstate, set_state_line


def findings(repo) -> tuple[int, dict]:
    res = gitstate(repo, "doctor", "--json")
    data = json.loads(res.stdout)
    return res.returncode, {(f["check"], f["status"]) for f in data["findings"]}


def test_a_fresh_clone_is_protected(repo):
    code, found = findings(repo)
    assert code == 0
    assert {("law", "ok"), ("hooks", "ok"), ("gitstate", "ok"), ("cache", "ok")} <= found
    assert ("approvals", "warn") in found      # no allowed_signers: approvals unauthenticated
    text = gitstate(repo, "doctor").stdout
    assert "doors hold" in text and "Approved-by" in text


def test_a_modified_hook_is_an_open_door(repo):
    hook = repo / ".git" / "hooks" / "reference-transaction"
    hook.write_text(hook.read_text().replace("exit 0", "exit 0  # edited", 1))
    code, found = findings(repo)
    assert code == 1 and ("hooks", "fail") in found
    res = gitstate(repo, "doctor")
    assert "reference-transaction" in res.stdout and "gitstate init" in res.stdout
    assert gitstate(repo, "init").returncode == 0        # the fix it names works
    assert findings(repo)[0] == 0


def test_hooks_run_from_tracked_files_are_an_open_door(repo):
    git(repo, "config", "core.hooksPath", ".githooks")
    code, found = findings(repo)
    assert code == 1 and ("hooks", "fail") in found
    assert "tracked" in gitstate(repo, "doctor").stdout


def test_a_missing_hook_and_a_hub(repo, tmp_path):
    (repo / ".git" / "hooks" / "pre-commit").unlink()
    hub = tmp_path / "hub.git"
    git(tmp_path, "init", "-q", "--bare", str(hub))
    git(repo, "remote", "add", "origin", str(hub))
    code, found = findings(repo)
    assert code == 1 and ("hooks", "fail") in found and ("hub", "warn") in found


def test_doctor_asks_each_remote_whether_it_is_a_hub_that_judges_pushes(repo, tmp_path):
    hub = tmp_path / "hub.git"
    git(tmp_path, "init", "-q", "--bare", str(hub))
    git(repo, "remote", "add", "origin", str(hub))
    git(repo, "remote", "add", "gone", str(tmp_path / "nowhere.git"))
    assert ("hub", "warn") in findings(repo)[1]
    said = gitstate(repo, "doctor").stdout
    assert "origin" in said and "judges nothing" in said and "not reached" in said
    assert "gitstate init --server" in said
    assert gitstate(hub, "init", "--server").returncode == 0
    assert ("hub", "ok") in findings(repo)[1]
    assert "origin " in gitstate(repo, "doctor").stdout
    assert "(a gitstate hub)" in gitstate(repo, "doctor").stdout


# The pre-commit shim gitstate 0.1 installed: it hands a state commit to `gitstate.hooks`.
OLD_PRE_COMMIT = r"""#!/bin/sh
# gitstate-shim: pre-commit -- written by `gitstate init`; run it again to update this file.
# Judges the staged agent state files against protocols/lifecycle.yaml before a commit is made.
#
# An ordinary commit touches no state file and no lifecycle: that is decided here, in shell,
# with one `git diff`, so that it costs a few milliseconds and never starts Python.
paths='@GITSTATE_PATHS@'

gitstate_run() {
    py=${GITSTATE_PYTHON:-$(git config --get gitstate.python)}
    if [ -n "$py" ] && [ -x "$py" ]; then
        "$py" -c 'import sys; from gitstate.hooks import main; sys.exit(main())' "$@"
        return $?
    fi
    if command -v gitstate >/dev/null 2>&1; then gitstate hook "$@"; return $?; fi
    for py in python3 python; do
        if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import gitstate' 2>/dev/null; then
            "$py" -m gitstate hook "$@"; return $?
        fi
    done
    echo "gitstate: this commit changes agent state, but gitstate cannot be found to check it." >&2
    echo "  Install it (pip install gitstate), or set GITSTATE_PYTHON to a Python that has it." >&2
    return 1
}

relevant=$(git diff --cached --raw --no-renames --abbrev=40 | grep -E "$paths")
if [ -n "$relevant" ]; then
    # The verdict on the files is left for commit-msg beside the index (see gitstate/hooks.py).
    index=${GIT_INDEX_FILE:-$(git rev-parse --git-dir)/index}
    expect="${index%/*}/gitstate-expect"
    printf '%s\n' "$relevant" | gitstate_run pre-commit --expect "$expect" || exit $?
fi
if [ -x "$0.pre-gitstate" ]; then exec "$0.pre-gitstate" "$@"; fi
exit 0
"""


def test_a_shim_of_an_older_gitstate_refuses_with_a_sentence_and_doctor_names_it(repo):
    assert gitstate(repo, "spawn", "alice").returncode == 0
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text(OLD_PRE_COMMIT.replace("@GITSTATE_PATHS@", "agent/"))
    set_state_line(repo, "alice", "state", "inbox")
    res = git(repo, "commit", "-qam", "@alice: [STATE:inbox] restored", check=False)
    assert res.returncode != 0
    assert res.stderr.strip() == ("gitstate: this hook was written by an older gitstate; run "
                                  "`gitstate init` to update it")
    code, found = findings(repo)
    assert code == 1 and ("hooks", "fail") in found
    data = json.loads(gitstate(repo, "doctor", "--json").stdout)
    old = [f for f in data["findings"] if f["check"] == "hooks" and f["status"] == "fail"]
    assert len(old) == 1 and "pre-commit hook was written by an older gitstate" in \
        old[0]["detail"] and "gitstate.hooks" in old[0]["detail"]
    assert old[0]["fix"] == "run `gitstate init`"
    assert gitstate(repo, "init").returncode == 0        # the fix it names works
    assert git(repo, "commit", "-qam", "@alice: [STATE:inbox] restored").returncode == 0
