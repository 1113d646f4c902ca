"""`feature_flag.evaluation` span events on the spans that evaluate a flag.

Why: the reference's trace smoking guns include them (flag_signals.md: "span log
feature_flag.key=productCatalogFailure, feature_flag.result.variant=on"; "Co-occurring flags produce
feature_flag.evaluation span events with other flag keys"). The OpenFeature hook adds one event per
evaluation, whatever the variant, so a service's SERVER spans carry an event for every flag it reads,
with the variant in force when the trace started (off included): the key alone proves nothing.
The variant timeline is the flagd ConfigMap's deploy history in the recorded run.
"""

from __future__ import annotations

import bisect

from ..catalog.flag_behaviour import flag_reader
from .simulator import Simulator

EVENT = "feature_flag.evaluation"
_PREFIX = "flagd: set "


class FlagTimeline:
    """Per flag, the (time, variant) changes the run deployed, and which service reads which flag."""

    def __init__(self, sim: Simulator):
        self.default = {f.name: f.default for f in sim.app.feature_flags}
        self.readers: dict[str, list[str]] = {}
        for flag in self.default:
            reader = flag_reader(flag)
            if reader:
                self.readers.setdefault(reader, []).append(flag)
        self.changes: dict[str, tuple[list[float], list[str]]] = {}
        for r in sim.pipeline.history:
            if r.kind != "flag" or r.status != "deployed" or not r.message.startswith(_PREFIX):
                continue
            flag, _, value = r.message[len(_PREFIX) :].partition(" to ")
            times, values = self.changes.setdefault(flag, ([], []))
            times.append(r.stages["rollout-started"])
            values.append(value)

    def variant(self, flag: str, t: float) -> str:
        times, values = self.changes.get(flag, ([], []))
        i = bisect.bisect_right(times, t)
        return values[i - 1] if i else self.default[flag]

    def annotate(self, trace: dict) -> dict:
        """The trace (as `traces` returns it) with evaluation events on its flag-reading SERVER spans."""
        t = float(trace["start_s"])
        for span in trace["spans"]:
            flags = self.readers.get(span["service"])
            if not flags or span["kind"] != "SERVER":
                continue
            span["events"] = [
                {
                    "name": EVENT,
                    "attributes": {
                        "feature_flag.key": f,
                        "feature_flag.provider_name": "flagd",
                        "feature_flag.result.variant": self.variant(f, t),
                    },
                }
                for f in sorted(flags)
            ]
        return trace
