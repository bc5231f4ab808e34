"""SSH signatures on commits (git's `gpg.format ssh`): who signed a commit, and with which key
this clone would sign. Checked with `ssh-keygen -Y verify` against the allowed-signers file of
the law in force, never on the hook path of an ordinary commit (imported lazily)."""

from __future__ import annotations

import os
from pathlib import Path

from gitstate.git.runner import Git
from gitstate.law.signers import keys_of, parse_public_key

NAMESPACE = "git"   # what git signs commits under


def split_signature(raw: bytes) -> tuple[bytes, bytes] | None:
    """(signed payload, armored signature) of a raw commit object, or None if unsigned."""
    head, sep, body = raw.partition(b"\n\n")
    lines = head.split(b"\n")
    kept, sig, in_sig = [], [], False
    for line in lines:
        if line.startswith(b"gpgsig "):
            in_sig = True
            sig.append(line[7:])
        elif in_sig and line.startswith(b" "):
            sig.append(line[1:])
        else:
            in_sig = False
            kept.append(line)
    if not sig:
        return None
    return b"\n".join(kept) + sep + body, b"\n".join(sig) + b"\n"


def signed_by(raw: bytes, signers: bytes, principal: str) -> str | None:
    """None if `raw` is signed by a key that `signers` lists for `principal`; else why not."""
    parts = split_signature(raw)
    if parts is None:
        return "the commit is not signed"
    payload, sig = parts
    if b"BEGIN SSH SIGNATURE" not in sig:
        return "the commit is signed, but not with SSH (gpg.format ssh)"
    import subprocess  # (only for a signature: an unsigned move imports neither)
    import tempfile
    with tempfile.TemporaryDirectory(prefix="gitstate-sig-") as tmp:
        allowed, sigfile = Path(tmp) / "allowed_signers", Path(tmp) / "commit.sig"
        allowed.write_bytes(signers)
        sigfile.write_bytes(sig)
        try:
            proc = subprocess.run(["ssh-keygen", "-Y", "verify", "-f", str(allowed),
                                   "-I", principal, "-n", NAMESPACE, "-s", str(sigfile)],
                                  input=payload, capture_output=True)
        except OSError:
            return "ssh-keygen is not installed here, so the signature cannot be checked"
    if proc.returncode == 0:
        return None
    return f"its signature is not by a key listed for {principal}"


def signed_by_any(raw: bytes, keys: list[tuple[str, str]]) -> str | None:
    """None if `raw` is signed by one of `keys` ((type, base64) each); else why not."""
    if not keys:
        return "no key of theirs is known"
    lines = "".join(f"mover {t} {k}\n" for t, k in sorted(set(keys)))
    why = signed_by(raw, lines.encode(), "mover")
    return None if why is None else why.replace("listed for mover", "of theirs")


def signing_key(git: Git) -> tuple[tuple[str, str] | None, str]:
    """(type, base64) of the public key this clone signs with, and where it was found (or
    why there is none)."""
    configured = git.config("user.signingkey")
    if not configured:
        return None, "no `git config user.signingkey`"
    if configured.startswith("key::"):
        return parse_public_key(configured[5:]), "user.signingkey"
    path = Path(os.path.expanduser(configured))
    for candidate in (path, Path(f"{path}.pub")):
        key = _key_in(candidate)
        if key:
            return key, str(candidate)
    key = _public_of(path) if path.is_file() else None
    if key:
        return key, str(path)
    return None, f"user.signingkey {configured} is not an SSH key gitstate can read"


def _key_in(candidate: Path) -> tuple[str, str] | None:
    """The public key a file holds (a `.pub`, or a key line configured by path)."""
    if not candidate.is_file():
        return None
    try:
        return parse_public_key(candidate.read_text("utf-8", "replace")[:20000])
    except OSError:
        return None


def _public_of(path: Path) -> tuple[str, str] | None:
    """The public key of the private key at `path`, as `ssh-keygen -y` derives it."""
    import subprocess
    proc = subprocess.run(["ssh-keygen", "-y", "-f", str(path)], capture_output=True,
                          text=True, stdin=subprocess.DEVNULL)
    return parse_public_key(proc.stdout) if proc.returncode == 0 else None


def can_sign_as(git: Git, signers: bytes, principal: str) -> tuple[bool, str]:
    """Whether this clone signs with a key `signers` lists for `principal`, and what it has."""
    key, where = signing_key(git)
    if key is None:
        return False, where
    listed = keys_of(signers.decode("utf-8", "replace"), principal)
    return key in listed, f"{key[0]} key from {where}"
