"""Signed approvals (docs/explanation/promises.md and docs/how-to/signing.md):
`protocols/allowed_signers` binds the humans of `policies.humans` to SSH keys, in git's
allowed-signers format (`ssh-keygen -Y verify`):

    zach ssh-ed25519 AAAAC3Nza... zach@laptop
    ana,ana@example.org namespaces="git" ssh-ed25519 AAAA...

Where the file exists in the law in force, a gated move must be in a commit signed by a key of
the human its `Approved-by:` trailer names. Pure: what is gated, who approves, which keys a
principal has. The signature itself is checked by `git/signing.py`.
"""

from __future__ import annotations

from gitstate.errors import InvalidFile
from gitstate.law.grammar import Message, parse_message
from gitstate.law.lifecycle import Lifecycle
from gitstate.law.rule_ids import Rule
from gitstate.law.rules import parse_state
from gitstate.law.verdict import FileChange, Violation

KEY_TYPES = ("ssh-ed25519", "ssh-rsa", "ecdsa-sha2-", "sk-ssh-ed25519@openssh.com",
             "sk-ecdsa-sha2-", "ssh-dss")


def _is_key_type(word: str) -> bool:
    return any(word == t or (t.endswith("-") and word.startswith(t)) for t in KEY_TYPES)


def entries(text: str) -> list[tuple[list[str], str, str]]:
    """(principals, key type, base64 key) of each line; comments and blank lines skipped."""
    out = []
    for line in text.splitlines():
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        principals = [p.strip().lower() for p in words[0].split(",") if p.strip()]
        for i, w in enumerate(words[1:-1], start=1):
            if _is_key_type(w):
                out.append((principals, w, words[i + 1]))
                break
    return out


def keys_of(text: str, principal: str) -> set[tuple[str, str]]:
    """The (type, base64) keys `principal` may sign with."""
    name = principal.strip().lower()
    return {(t, k) for ps, t, k in entries(text) if name in ps}


def principals_of(text: str, key: tuple[str, str]) -> list[str]:
    return sorted({p for ps, t, k in entries(text) if (t, k) == key for p in ps})


def parse_public_key(line: str) -> tuple[str, str] | None:
    """(type, base64) of an OpenSSH public key line ('ssh-ed25519 AAAA... comment')."""
    words = line.split()
    for i, w in enumerate(words[:-1]):
        if _is_key_type(w):
            return (w, words[i + 1])
    return None


def approvers(lc: Lifecycle, message: str | Message) -> list[str]:
    """The humans of the lifecycle named in the commit's `Approved-by:` trailers."""
    msg = parse_message(message) if isinstance(message, str) else message
    humans = {h.lower(): h for h in lc.policies.humans}
    return [humans[v.strip().lower()] for v in msg.trailer("approved-by")
            if v.strip().lower() in humans]


def gated(lc: Lifecycle, changes: list[FileChange], changed_law: list[str]) -> list[str]:
    """What in a commit needs a human's approval: 'the law (...)', 'alice frozen -> bootstrap'."""
    out = []
    if changed_law and lc.policies.law_approval:
        out.append(f"a change of the law ({', '.join(changed_law)})")
    rx = lc.state_path_regex()
    out += [move for ch in changes if (move := _gated_move(lc, ch, rx)) is not None]
    return out


def _gated_move(lc: Lifecycle, ch: FileChange, rx) -> str | None:
    """'alice frozen -> bootstrap' for a change of a state file that needs approval."""
    old, new = _states(ch)
    if not (isinstance(old, str) and isinstance(new, str) and lc.gated(old, new)):
        return None
    m = rx.match(ch.path)
    return f"{m.group('id') if m else ch.path} {old} -> {new}"


def _states(ch: FileChange) -> tuple:
    """The states both sides of a change write (None, None: unchanged, or a side absent or
    unreadable)."""
    if ch.old is None or ch.new is None or ch.old == ch.new:
        return None, None
    try:
        return parse_state(ch.old, ch.path, None).state, parse_state(ch.new, ch.path, None).state
    except InvalidFile:
        return None, None


def unsigned(what: list[str], names: list[str], why: str) -> Violation:
    who = " or ".join(names)
    return Violation(Rule.UNSIGNED_APPROVAL, f"{'; '.join(what)} is approved by {who}, but "
                     f"protocols/allowed_signers binds approvals to keys and {why}; {who} must "
                     f"make this commit signed with a listed key (`gitstate ... --approved-by "
                     f"{names[0]}` with `git config user.signingkey` set to that key, or "
                     "`git commit -S`)", "commit message")
