"""The humans of the law (`policies.humans`, who may approve gated moves), as `gitstate init`
names them: given with `--human`, else this user's `git config user.name` made into an id;
changed on a managed repository only with the approval of a human in force; and the SSH key
`--signing-key` records for the first of them in protocols/allowed_signers."""

from __future__ import annotations

import re
from pathlib import Path

from gitstate.errors import GitstateError, UsageError
from gitstate.git.runner import Git
from gitstate.law.lifecycle import LIFECYCLE_PATH, SIGNERS_PATH, Lifecycle
from gitstate.law.limits import LIFECYCLE_BYTES
from gitstate.law.load import read_lifecycle


def human_id(name: str) -> str | None:
    """A person's name made into the id of a human of the law ("Pat Smith" -> pat-smith):
    lowercase letters, digits, '.', '_' and '-', starting with a letter or digit; accents
    dropped; None when nothing of it is usable."""
    import unicodedata
    plain = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
    made = re.sub(r"[^a-z0-9._-]+", "-", plain)
    made = re.sub(r"^[^a-z0-9]+", "", made)[:64].rstrip("-._")
    return made or None


def human_of(git: Git) -> str:
    """The human of a new law when `init` is given none: this user's `git config user.name`,
    made into an id; refused (nothing written) when there is none usable. Never asks."""
    name = git.config("user.name")
    made = human_id(str(name)) if name else None
    if made is None:
        said = f"git config user.name is {str(name)!r}, which makes no name of letters or " \
               "digits" if name else "git config user.name is not set"
        raise UsageError(f"who approves gated moves? {said}; nothing was written",
                         hint="pass --human NAME (your name as the law will know it, e.g. "
                              "`gitstate init --human pat`), or set git config user.name")
    return made


def read_law_file(path: Path, name: str) -> tuple[str, Lifecycle]:
    """A lifecycle file's text and lifecycle: refused whole (too large, not UTF-8, invalid)
    before anything is written or committed."""
    with open(path, "rb") as fh:
        data = fh.read(LIFECYCLE_BYTES + 1)
    lc = read_lifecycle(data, name)
    return data.decode("utf-8"), lc


def kept_humans(current: Path) -> tuple[str, ...]:
    """The humans of the lifecycle a repository has (`init --force --lifecycle NEW` keeps
    them), or none."""
    if not current.is_file():
        return ()
    try:
        return tuple(read_law_file(current, LIFECYCLE_PATH)[1].policies.humans)
    except (OSError, GitstateError):
        return ()


def approved_change(current: Lifecycle | None, changed: list[str], approved_by: str | None,
                    were: list[str], humans: tuple[str, ...]) -> None:
    """`init --human X` on a managed repository changes who approves: a change of the law
    (`current`, the law committed; `changed`, the law files this init changes), refused
    (nothing written) unless one of the humans in force approves it."""
    if current is None or LIFECYCLE_PATH not in changed or not current.policies.law_approval:
        return
    named = {h.lower() for h in current.policies.humans}
    if approved_by and approved_by.strip().lower() in named:
        return
    _refuse_humans(current.policies.humans, approved_by, were, humans)


def _refuse_humans(who: tuple[str, ...], approved_by: str | None, were: list[str],
                   humans: tuple[str, ...]) -> None:
    """Raised: a change of the humans not approved by one of those in force (`who`)."""
    by = f" ('{approved_by}' is not one of them)" if approved_by else ""
    raise GitstateError(
        f"the humans of the law would change from {', '.join(were) or '(none)'} to "
        f"{', '.join(humans)}: a change of the law, approved by one of the humans in force "
        f"({', '.join(who) or 'none'}){by}; nothing was written",
        hint="run `gitstate init " + " ".join(f"--human {h}" for h in humans)
             + f" --approved-by {who[0] if who else '<human>'}`"
             + (f" (or another of {', '.join(who)})" if len(who) > 1 else ""))


def with_humans(text: str, humans: tuple[str, ...]) -> str:
    """The lifecycle text with `policies.humans` naming `humans` (as shipped: one line)."""
    if not humans:
        return text
    for h in humans:
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}", h):
            raise UsageError(f"--human {h!r}: a name of letters, digits, '.', '_' or '-'")
    line = re.compile(r"^(  humans:[ \t]*)\[[^\]\n]*\]", re.MULTILINE)
    if not line.search(text):
        raise UsageError("--human needs a lifecycle with a 'humans: [...]' line under policies",
                         hint="edit policies.humans in the lifecycle file instead")
    return line.sub(lambda m: m.group(1) + "[" + ", ".join(humans) + "]", text, count=1)


def record_key(top: Path, lc: Lifecycle, value: str, files: dict[str, bytes | None],
               actions: list[str]) -> None:
    """protocols/allowed_signers with the key of `value` listed for the law's first human."""
    from gitstate.law.signers import keys_of
    if not lc.policies.humans:
        raise UsageError("--signing-key records a human's key, and the lifecycle names no "
                         "human", hint="name one: `gitstate init --human NAME --signing-key "
                                       "PATH`")
    human = lc.policies.humans[0]
    key = public_key(value)
    target = top / SIGNERS_PATH
    text = target.read_text("utf-8", "replace") if target.is_file() else ""
    if key in keys_of(text, human):
        return
    line = f"{human} {key[0]} {key[1]}\n"
    files[SIGNERS_PATH] = (text + ("\n" if text and not text.endswith("\n") else "")
                           + line).encode()
    actions.append(f"recorded {human}'s key ({key[0]} ...{key[1][-12:]}) in {SIGNERS_PATH}: "
                   f"gated moves now need {human}'s signature")


def public_key(value: str) -> tuple[str, str]:
    """(type, base64) of an SSH public key given as a line, a .pub file, or a private key file
    with its .pub beside it (as `git config user.signingkey` names one)."""
    from gitstate.law.signers import parse_public_key
    text = value.strip()
    key = parse_public_key(text) if not text.startswith("key::") else \
        parse_public_key(text[5:])
    if key is None:
        key = _key_file(text)
    if key is None:
        raise UsageError(f"--signing-key {value!r} is not an SSH public key",
                         hint="give a .pub file (e.g. ~/.ssh/id_ed25519.pub), the private key "
                              "beside it, or the line 'ssh-ed25519 AAAA...'")
    return key


def _key_file(text: str) -> tuple[str, str] | None:
    """The public key in the file `text` names, or in the .pub beside it."""
    import os

    from gitstate.law.signers import parse_public_key
    path = Path(os.path.expanduser(text))
    for candidate in (path, Path(f"{path}.pub")):
        if candidate.is_file() and candidate.stat().st_size < 20000:
            found = candidate.read_text("utf-8", "replace")
            key = None if found.lstrip().startswith("-----") else parse_public_key(found)
            if key is not None:
                return key
    return None
