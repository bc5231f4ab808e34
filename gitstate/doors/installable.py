"""Whether a CI job's install line names gitstate in a form pip can install, judged without
the network: a pinned requirement of the distribution `gitstate-agents` on the package index
(`gitstate` there is an unrelated project), a git URL at a tag, or a wheel or sdist of it.
What only the network could tell (that the index, the URL or the tag serves it) is said, not
guessed. `gitstate doctor` reads the CI files with it; `init --ci --install SPEC` checks SPEC.
"""

from __future__ import annotations

import re

DISTRIBUTION = "gitstate-agents"
UNKNOWABLE = "whether it can be fetched (the index, the URL, the tag) is not checked here: " \
             "that needs the network, as CI has"

# the spec of a CI file: the value of GITSTATE_INSTALL, or the arguments of `pip install`
_VARIABLE = re.compile(r"^\s*GITSTATE_INSTALL:\s*(.+?)\s*(?:#.*)?$", re.M)
_PIP = re.compile(r"\bpip3?\s+install\s+(.+?)\s*$", re.M)
_ACTION = re.compile(r"^\s*-?\s*uses:\s*([\w.-]+/[\w.-]*gitstate[\w.-]*)@(\S+)", re.M | re.I)


def _unquoted(text: str) -> str:
    text = text.strip()
    if len(text) > 1 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def spec_in(ci_text: str) -> str | None:
    """What a CI file has pip install for gitstate: GITSTATE_INSTALL's value, else the first
    `pip install` line's argument (options dropped); None when there is neither."""
    found = _VARIABLE.search(ci_text)
    if found:
        return _unquoted(found.group(1))
    for line in _PIP.finditer(ci_text):
        words = [w for w in line.group(1).split() if not w.startswith("-")]
        if words:
            return _unquoted(words[0])
    return None


def action_in(ci_text: str) -> str | None:
    """`OWNER/REPO@REF` of gitstate's GitHub Action, when a workflow uses it."""
    found = _ACTION.search(ci_text)
    return f"{found.group(1)}@{found.group(2)}" if found else None


def judge(spec: str) -> tuple[str, str]:
    """(ok | warn | fail, what the spec installs, or why it cannot install gitstate)."""
    spec = _unquoted(spec)
    if not spec:
        return "fail", "the install line installs nothing"
    if "$" in spec:
        return "warn", f"installs {spec}: a variable, whose value is not seen here"
    if spec.startswith("git+"):
        return _git_url(spec)
    if re.match(r"^(https?|file)://", spec):
        return _archive(spec)
    if spec.startswith((".", "/", "~")):
        return "warn", f"installs the path {spec}: only where that path exists (in CI, in " \
                       "the checkout)"
    return _requirement(spec)


def _requirement(spec: str) -> tuple[str, str]:
    """A requirement of the package index: `gitstate-agents`, pinned, or at a URL."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name
    try:
        req = Requirement(spec)
    except InvalidRequirement as exc:
        return "fail", f"{spec!r} is not something pip installs: {exc}"
    name = canonicalize_name(req.name)
    if name == "gitstate":
        return "fail", f"installs {spec}: `gitstate` on the package index is an unrelated " \
                       f"project; gitstate is `{DISTRIBUTION}` there"
    if name != DISTRIBUTION:
        return "fail", f"installs {spec}, not {DISTRIBUTION}"
    if req.url:
        return _git_url(req.url) if req.url.startswith("git+") else _archive(req.url)
    return _pinned(spec, req)


def _pinned(spec: str, req) -> tuple[str, str]:
    """A requirement of gitstate from the package index: its exact version, if it has one."""
    pins = [s for s in req.specifier if s.operator in ("==", "===") and "*" not in s.version]
    if not pins:
        return "warn", f"installs {spec}: no exact version, so CI runs whatever the index " \
                       f"has that day (pin it: {DISTRIBUTION}==VERSION)"
    return "ok", f"installs {DISTRIBUTION} {pins[0].version} from the package index"


def _git_url(url: str) -> tuple[str, str]:
    m = re.match(r"^git\+(https?|ssh|file|git)://(\S+)$", url)
    if not m:
        return "fail", f"{url!r} is not a git URL pip reads (git+https://HOST/PATH@TAG)"
    _host, _, path = m.group(2).split("#", 1)[0].partition("/")   # user@ belongs to the host
    if "@" not in path or not path.rsplit("@", 1)[1]:
        return "warn", f"installs {url}: a git URL without @TAG, so CI runs whatever its " \
                       "default branch holds that day (add @TAG)"
    return "ok", f"installs gitstate from git at {path.rsplit('@', 1)[1]}"


def _archive(url: str) -> tuple[str, str]:
    from packaging.utils import (
        InvalidSdistFilename,
        InvalidWheelFilename,
        canonicalize_name,
        parse_sdist_filename,
        parse_wheel_filename,
    )
    filename = url.split("?", 1)[0].split("#", 1)[0].rstrip("/").rsplit("/", 1)[-1]
    try:
        if filename.endswith(".whl"):
            name, version = parse_wheel_filename(filename)[:2]
        elif filename.endswith((".tar.gz", ".zip")):
            name, version = parse_sdist_filename(filename)
        else:
            return "warn", f"installs {url}: not a wheel or sdist by its name; what it holds " \
                           "cannot be seen here"
    except (InvalidWheelFilename, InvalidSdistFilename) as exc:
        return "fail", f"{filename}: {exc}"
    if canonicalize_name(name) != DISTRIBUTION:
        return "fail", f"installs {filename}, a file of {name}, not {DISTRIBUTION}"
    return "ok", f"installs {DISTRIBUTION} {version} from {url}"
