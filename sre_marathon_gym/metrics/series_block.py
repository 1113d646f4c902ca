"""Series registered together, always in the same order: a simulator's span metrics are the same
thousands of (name, labels) at every reset of an app.

Why: a store registers a series by hashing its key (the name and a tuple of label pairs) into its
registry, and Python does not keep a tuple's hash. A block hashes its keys once; a store with no
series yet takes a copy of the block's registry (a dict copy keeps the hashes) instead of hashing
every key again (`MetricStore.register_block`).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from ..core.errors import TelemetryError
from .labels import LabelKey


class SeriesBlock:
    """Distinct series (metric name, normalised labels) in registration order, with the registry
    (key -> position, name -> positions) a store holding exactly these series has."""

    __slots__ = ("names", "keys", "key_to_id", "by_name", "__weakref__")

    def __init__(self, names: Sequence[str], keys: Sequence[LabelKey]):
        if len(names) != len(keys):
            raise TelemetryError(f"a series block needs one name per label set: {len(names)} vs {len(keys)}")
        self.names = [sys.intern(n) for n in names]
        self.keys = list(keys)
        self.key_to_id: dict[tuple[str, LabelKey], int] = {}
        self.by_name: dict[str, list[int]] = {}
        for i, key in enumerate(zip(self.names, self.keys)):
            if self.key_to_id.setdefault(key, i) != i:
                raise TelemetryError(f"series {key[0]}{dict(key[1])} is twice in one block")
            self.by_name.setdefault(key[0], []).append(i)

    def __len__(self) -> int:
        return len(self.names)

    def __deepcopy__(self, memo: dict) -> SeriesBlock:
        return self  # never modified: copies of a store share it
