"""Model of `catalog/pricing.yaml`: token prices per model, for the cost column of LLM runs.

Why in the catalog: cost is a reported metric (SRE-Marathon §3), so the prices behind it are
versioned data with the rest of the benchmark, and a user can override them without code.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from .base import CatalogModel


class ModelPrice(CatalogModel):
    name: str = Field(min_length=1)
    input_per_mtok: float = Field(ge=0, description="USD per million input (prompt) tokens")
    output_per_mtok: float = Field(ge=0, description="USD per million output (completion) tokens")

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
        """The exact entry, else the longest entry prefixing the name; also without a `provider/` prefix."""
        by_name = {m.name: m for m in self.models}
        for name in dict.fromkeys((model, model.rsplit("/", 1)[-1])):
            if name in by_name:
                return by_name[name]
            prefixed = [m for m in self.models if name.startswith((m.name + "-", m.name + "@"))]
            if prefixed:
                return max(prefixed, key=lambda m: len(m.name))
        return None


__all__ = ["ModelPrice", "Pricing"]
