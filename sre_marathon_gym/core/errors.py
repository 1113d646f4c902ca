"""One error hierarchy for the package, so callers can catch `SREMarathonError`."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class SREMarathonError(Exception):
    """Base class of every error the package raises on purpose."""


class CatalogError(SREMarathonError):
    """A catalog file is missing, unreadable, or fails validation.

    The message names the file, the entry and the field.
    """

    def __init__(self, problems: list[str] | str):
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        head = f"{len(self.problems)} catalog problem(s):" if len(self.problems) > 1 else "catalog problem:"
        super().__init__("\n".join([head, *(f"  - {p}" for p in self.problems)]))


class UnknownNameError(SREMarathonError, KeyError):
    """A name (app, service, fault id, tool...) is not known; suggests the closest known one."""

    def __init__(self, kind: str, name: str, known: Iterable[str]):
        self.kind, self.name = kind, name
        super().__init__(f"unknown {kind} {name!r}{did_you_mean(name, known)}")

    def __str__(self) -> str:  # KeyError would repr() the message
        return self.args[0]


class ConfigurationError(SREMarathonError, ValueError):
    """An environment or run option has an invalid value."""


class SimulatorError(SREMarathonError):
    """An operation on the simulated cluster was invalid (unknown object, bad value)."""


class TelemetryError(SREMarathonError, ValueError):
    """A metric write or query is invalid (off-grid time, time going backwards, unknown id...)."""


class RetentionError(TelemetryError):
    """A query needs samples that retention has already dropped."""


class BundleError(SREMarathonError):
    """A bundle cannot be written, or is not a bundle, or fails verification; the message says what failed."""


class BundleWriteError(BundleError, OSError):
    """The file system refused a bundle write (full disk, permissions, a directory in the way).

    Also an `OSError`, so callers that handled the raw error keep working."""


class IncompleteBundleError(BundleError):
    """The bundle seals a run that stopped early: it has no Marathon-Score unless explicitly allowed."""


class CatalogMismatchError(BundleError):
    """The bundle's run used another catalog than the one asked to score it (a silent rescore)."""


class RunInterrupted(SREMarathonError):
    """A run was stopped (Ctrl-C); the message says how far it got and where its partial recording is."""


class AlertRuleError(SREMarathonError, ValueError):
    """A rule's params cannot be evaluated (unknown kind, function, operator, template...)."""


class AlertEvaluationError(SREMarathonError, ValueError):
    """An evaluation request is invalid (time going backwards) or a rule fails like in Prometheus
    (a join with several partners for one match group)."""


class OptionalDependencyError(SREMarathonError, ImportError):
    """A feature needs an optional extra that is not installed; the message says what to install."""


class ModelEndpointError(SREMarathonError):
    """An LLM endpoint gave no usable answer (after retries, or a non-retryable HTTP error).

    `status_code` is the HTTP status of a non-retryable refusal (401, 404...), else None."""

    def __init__(self, message: str, status_code: int | None = None):
        super().__init__(message)
        self.status_code = status_code


class BudgetExceededError(SREMarathonError):
    """An LLM agent's invocation ran out of its wall-clock or token budget (recorded, never fatal)."""


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """Return "; did you mean 'x'?" for the closest known name, or a short list of known names."""
    known = sorted(set(known))
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.5)
    if close:
        return f"; did you mean {close[0]!r}?"
    if 0 < len(known) <= 8:
        return f"; known: {', '.join(known)}"
    return ""


class PrometheusError(SREMarathonError):
    """Exporting to, backfilling or querying a real Prometheus failed (missing binary, bad URL,
    a query Prometheus rejected); the message says which command or query and why."""


class PromQLError(PrometheusError, ValueError):
    """Prometheus rejected a query as malformed (HTTP 400 / 422): the caller's mistake, not an outage."""


class BackendError(SREMarathonError):
    """A cluster backend refused or failed an operation; `code` is the tool error code it maps to
    (forbidden | not_found | conflict | unavailable | invalid_arguments)."""

    def __init__(self, code: str, message: str):
        self.code = code
        super().__init__(message)


class PatternError(SREMarathonError, ValueError):
    """A regular expression or search pattern from outside the package is invalid or too costly to
    run (too long, a repetition count too large, syntax RE2 cannot run in linear time); the message
    names the pattern. Tools report it as `invalid_arguments`."""
