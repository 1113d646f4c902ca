"""How a benign change is written: harmless config values (log level, debug toggles, more generous
timeouts, larger pools and caches) and source edits (a comment, a version bump), with the unified
diff the build pipeline shows. The schedule (`fault_schedule`) decides when and where they ship;
this module only makes each one look like a real, harmless commit. Messages are descriptions;
`commit_message` writes them in the catalog's convention ("<service>: <what changed>"), the one
fault changes use, so the message alone never tells a benign change from a faulty one."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ..catalog import Fault
    from ..catalog.apps import App, ConfigEntry


BENIGN_REVISION_BASE = 1000


# --------------------------------------------------------------------------------------------------
# benign changes

_LOG_LEVELS = ("debug", "info", "warn")
_RE_LOG_LEVEL = re.compile(r"(?i)log.?level|^level$|verbosity")
_RE_TOGGLE = re.compile(r"(?i)profil|pprof|debug|verbose|stats|tracing|telemetry|metrics")
_RE_KNOB_INT = re.compile(r"(?i)pool|thread|worker|cache|buffer|batch|capacity|size|interval|idle|keepalive")
_RE_UNSAFE = re.compile(
    r"(?i)port|addr|host|url|endpoint|secret|password|token|key|credential|retr|replica|flag"
)
_RE_SEMVER = re.compile(r"(\d+)\.(\d+)\.(\d+)")
_RE_DECLARATION = re.compile(
    r"^\s*(func |def |class |fn |pub |public |private |protected |static |const |let |var |function "
    r"|async |type )"
)
_HASH_COMMENT = (
    ".py",
    ".rb",
    ".yaml",
    ".yml",
    ".conf",
    ".toml",
    ".sh",
    ".ex",
    ".exs",
    ".properties",
    ".cfg",
    ".ini",
    ".r",
    "dockerfile",
    "makefile",
    ".tf",
)
_DASH_COMMENT = (".sql", ".lua", ".hs")
_NO_COMMENT = (".json", ".xml", ".html", ".md", ".txt", ".csv", ".proto.bin")


def _revision_number(rev: str) -> int:
    m = re.fullmatch(r"r(\d+)", rev)
    return int(m.group(1)) if m else 0


def benign_revision_base(app: App, faults: Iterable[Fault]) -> int:
    """First benign revision number: above every revision the app's catalog mentions."""
    seen = [0]
    for s in app.services:
        seen += [_revision_number(c.revision) for c in s.config]
        seen += [_revision_number(f.revision) for f in s.sources]
        seen.append(s.deployment_revision)
    for f in faults:
        if f.change is not None:
            seen += [_revision_number(f.change.from_revision), _revision_number(f.change.to_revision)]
        m = re.search(r"@r(\d+)$", f.artifact)
        if m:
            seen.append(int(m.group(1)))
    top = max(seen)
    return max(BENIGN_REVISION_BASE, (top // 1000 + 1) * 1000)


def _unified_diff(path: str, old: list[str], new: list[str]) -> str:
    body = difflib.unified_diff(old, new, fromfile=f"a/{path}", tofile=f"b/{path}", n=2, lineterm="")
    return "\n".join(body) + "\n"


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def config_diff(service: str, entry: ConfigEntry, new: str) -> str:
    """Same shape as the catalog's config-fault diffs: the Deployment env entry or the ConfigMap key."""
    if entry.source == "configmap":
        old_lines = ["data:", f"  {entry.key}: {_quote(entry.value)}"]
        return _unified_diff(
            f"kubernetes/{entry.configmap}.yaml", old_lines, ["data:", f"  {entry.key}: {_quote(new)}"]
        )
    old_lines = ["        env:", f"        - name: {entry.key}", f"          value: {_quote(entry.value)}"]
    return _unified_diff(
        f"kubernetes/{service}.yaml", old_lines, old_lines[:2] + [f"          value: {_quote(new)}"]
    )


def drop_diff(service: str, entry: ConfigEntry) -> str:
    """The diff that removes a config key (the catalog's shape for a dropped env entry)."""
    if entry.source == "configmap":
        old_lines = ["data:", f"  {entry.key}: {_quote(entry.value)}"]
        return _unified_diff(f"kubernetes/{entry.configmap}.yaml", old_lines, ["data:"])
    old_lines = ["        env:", f"        - name: {entry.key}", f"          value: {_quote(entry.value)}"]
    return _unified_diff(f"kubernetes/{service}.yaml", old_lines, old_lines[:1])


def _scaled(value: str, rng: np.random.Generator) -> str | None:
    try:
        number = float(value)
    except ValueError:
        return None
    if number <= 0:
        return None
    grown = number * float(rng.uniform(1.1, 1.5))
    if value.strip().lstrip("-").isdigit():
        return str(max(int(number) + 1, int(round(grown))))
    return f"{grown:.3g}"


def commit_message(service: str, description: str) -> str:
    """A commit message in the catalog's convention for changes to `service` (fault changes are
    written the same way by scripts/catalog_gen)."""
    return f"{service}: {description}"


def benign_config_value(entry: ConfigEntry, rng: np.random.Generator) -> tuple[str, str] | None:
    """A harmless new value for a config entry and a commit message, or None if the knob is not safe."""
    key, value = entry.key, entry.value
    if entry.kind in ("address", "flag"):
        return None
    if _RE_LOG_LEVEL.search(key) and value.lower() in _LOG_LEVELS + ("warning", "error", "trace"):
        options = [lvl for lvl in _LOG_LEVELS if lvl != value.lower()]
        new = options[int(rng.integers(len(options)))]
        new = new.upper() if value.isupper() else new
        return new, f"set log level to {new}"
    if _RE_UNSAFE.search(key) and not _RE_LOG_LEVEL.search(key):
        return None
    if entry.kind == "bool" and _RE_TOGGLE.search(key) and value.lower() in ("true", "false"):
        flipped = "false" if value.lower() == "true" else "true"
        new = flipped.capitalize() if value[:1].isupper() else flipped
        return new, f"set {key} to {new}"
    if entry.kind in ("timeout_ms", "duration_s"):
        new = _scaled(value, rng)
        verb = "relax" if entry.kind == "timeout_ms" else "raise"
        return None if new is None else (new, f"{verb} {key} to {new}")
    if entry.kind == "int" and _RE_KNOB_INT.search(key):
        new = _scaled(value, rng)
        return None if new is None else (new, f"raise {key} to {new}")
    if entry.kind == "string" and "version" in key.lower():
        m = _RE_SEMVER.search(value)
        if m:
            bumped = f"{m.group(1)}.{m.group(2)}.{int(m.group(3)) + 1}"
            new = value[: m.start()] + bumped + value[m.end() :]
            return new, f"bump {key} to {bumped}"
    return None


def _comment_prefix(path: str, lines: list[str] | None = None) -> str | None:
    """The line-comment marker: the one the excerpt already uses, else the file type's."""
    for ln in lines or []:
        for marker in ("//", "#", "--"):
            if ln.strip().startswith(marker) and not ln.strip().startswith(
                ("#!", "#include", "#define", "#if")
            ):
                return marker
    low = re.sub(r"\.(template|tmpl|tpl|j2|in)$", "", path.lower())
    if low.endswith(_NO_COMMENT):
        return None
    if low.endswith(_HASH_COMMENT) or low.rsplit("/", 1)[-1] in ("dockerfile", "makefile"):
        return "#"
    if low.endswith(_DASH_COMMENT):
        return "--"
    return "//"


_COMMENTS = (
    ("explain why {name} is kept small", "keep this small: it runs on every request"),
    (
        "clarify the error handling in {name}",
        "errors are returned to the caller, which decides whether to retry",
    ),
    (
        "note the units used in {name}",
        "durations below are in milliseconds unless the name says otherwise",
    ),
    (
        "document the invariant relied on in {name}",
        "invariant: inputs were validated by the caller",
    ),
    ("link the runbook from {name}", "see the service runbook for the on-call procedure"),
    ("add a section comment in {name}", "--- request handling ---"),
)
_CONFIG_FILE_COMMENTS = (
    ("link the runbook from {name}", "see the service runbook before changing these values"),
    ("note the units used in {name}", "sizes are in bytes and durations in seconds unless suffixed"),
    ("record the review of {name}", "values below were reviewed for the current release"),
    ("add a section comment in {name}", "--- defaults ---"),
)
_CONFIG_FILE = re.compile(r"\.(ya?ml|conf|cnf|properties|ini|cfg|toml|template|tmpl|env)$", re.IGNORECASE)


def benign_code_change(path: str, excerpt: str, rng: np.random.Generator) -> tuple[str, str] | None:
    """A harmless source edit (version bump or comment) as (message, unified diff), or None."""
    lines = excerpt.rstrip("\n").split("\n")
    name = path.rsplit("/", 1)[-1]
    for i, ln in enumerate(lines):
        m = _RE_SEMVER.search(ln)
        if m and "version" in ln.lower() and rng.random() < 0.5:
            bumped = f"{m.group(1)}.{m.group(2)}.{int(m.group(3)) + 1}"
            new = lines[:i] + [ln[: m.start()] + bumped + ln[m.end() :]] + lines[i + 1 :]
            return f"bump version to {bumped}", _unified_diff(path, lines, new)
    prefix = _comment_prefix(path, lines)
    if prefix is None:
        return None
    skip = (
        "#",
        "//",
        "--",
        "*",
        "/*",
        "package ",
        "import ",
        "from ",
        "using ",
        "require",
        "namespace ",
        "<?",
        "}",
        ")",
        "]",
        "end",
        "else",
        "elif",
        "except",
        "catch",
        "finally",
        "@",
    )
    candidates = [
        i
        for i, ln in enumerate(lines)
        if i > 0
        and ln.strip()
        and not ln.strip().startswith(skip)
        and not lines[i - 1].strip().startswith("@")
    ]  # not between an annotation and its target
    headers = [i for i in candidates if _RE_DECLARATION.search(lines[i])]
    candidates = headers or candidates  # prefer a comment above a declaration, as people write them
    if not candidates:
        return None
    at = candidates[int(rng.integers(len(candidates)))]
    texts = _CONFIG_FILE_COMMENTS if _CONFIG_FILE.search(path) else _COMMENTS
    message, text = texts[int(rng.integers(len(texts)))]
    indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
    new = lines[:at] + [f"{indent}{prefix} {text}"] + lines[at:]
    return message.format(name=name), _unified_diff(path, lines, new)
