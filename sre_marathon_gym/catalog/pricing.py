"""Model of `catalog/pricing.yaml`: token prices per model, for the cost column of LLM runs.

Why in the catalog: cost is a reported metric (SRE-Marathon §3), so the prices behind it are
versioned data with the rest of the benchmark, and a user can override them without code.
"""

from __future__ import annotations

import re

from pydantic import Field, model_validator

from .base import CatalogModel


class ModelPrice(CatalogModel):
    name: str = Field(min_length=1)
    input_per_mtok: float = Field(
        ge=0, allow_inf_nan=False, description="USD per million input (prompt) tokens"
    )
    output_per_mtok: float = Field(
        ge=0, allow_inf_nan=False, description="USD per million output (completion) tokens"
    )

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input_per_mtok + output_tokens * self.output_per_mtok) / 1e6


class Pricing(CatalogModel):
    schema_version: int
    as_of: str = ""
    currency: str = "USD"
    models: list[ModelPrice] = Field(default_factory=list)

    @model_validator(mode="after")
    def _unique(self) -> Pricing:
        names = [m.name for m in self.models]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"models: duplicate name(s) {dup}")
        return self

    def price_for(self, model: str) -> ModelPrice | None:
        """The entry named exactly `model`, or its dated snapshot (`gpt-4o-2024-08-06`,
        `claude-sonnet-4-20250514`, `claude-sonnet-4@20250514` -> the undated entry); each also
        tried without a `provider/` prefix. Nothing else: `o3-mini`, `o3-pro` or
        `gpt-5-chat-latest` are other models with other prices, so they are not priced as `o3`
        or `gpt-5` (unknown models cost 0 and the run says so)."""
        by_name = {m.name: m for m in self.models}
        for name in dict.fromkeys((model, model.rsplit("/", 1)[-1])):
            for candidate in (name, _SNAPSHOT.sub("", name)):
                if candidate in by_name:
                    return by_name[candidate]
        return None


# a date-snapshot suffix: -2024-08-06, -20240806 or @20240806 (Vertex AI), at the end of the name
_SNAPSHOT = re.compile(r"(?:-\d{4}-\d{2}-\d{2}|[-@]\d{8})$")


__all__ = ["ModelPrice", "Pricing"]
