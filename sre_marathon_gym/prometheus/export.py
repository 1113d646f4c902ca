"""One call from a run's telemetry to a Prometheus TSDB directory that `prometheus` can serve."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from ..core.errors import PrometheusError
from .openmetrics import DEFAULT_ORIGIN_S, write_openmetrics
from .server import create_blocks

OPENMETRICS_FILE = "metrics.om"
DATA_DIR = "data"


def export_run(
    source: Any, out_dir: str | os.PathLike[str], origin_s: int = DEFAULT_ORIGIN_S, overwrite: bool = False
) -> dict[str, Any]:
    """Write `source` (a MetricStore or bundle RecordedMetrics) to ``OUT/metrics.om`` and backfill
    ``OUT/data``; returns paths, series/sample counts and the Prometheus time range."""
    out = Path(out_dir)
    data = out / DATA_DIR
    if data.exists():
        if not overwrite:
            raise PrometheusError(
                f"{data} already exists: pick another --out or pass --overwrite "
                "(backfilling twice would duplicate blocks)"
            )
        shutil.rmtree(data)
    out.mkdir(parents=True, exist_ok=True)
    om = out / OPENMETRICS_FILE
    counts = write_openmetrics(source, om, origin_s)
    if counts["series"] == 0:
        raise PrometheusError("the run has no metric samples to export (was telemetry disabled?)")
    blocks = create_blocks(om, data)
    end = getattr(source, "last_time", None)
    if end is None and hasattr(source, "times"):
        end = float(source.times[-1])
    return {
        "openmetrics": str(om),
        "data_dir": str(data),
        "blocks": blocks,
        **counts,
        "origin_s": origin_s,
        "start": origin_s,
        "end": origin_s + int(end or 0),
    }
