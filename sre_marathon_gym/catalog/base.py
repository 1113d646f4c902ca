"""Common base for catalog models: strict (unknown fields are errors) and immutable."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

SCHEMA_VERSION = 1


class CatalogModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
