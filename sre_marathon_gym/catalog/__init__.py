"""Catalog models, loader and cross-reference validation (no simulator knowledge here).

May import: `core` only: the catalog is data, and knows nothing of what reads it.
"""

from __future__ import annotations

from .alerts import AlertRule, AlertTemplate, MetricSpec, RulePack
from .apps import App, Edge, RequestType, Service
from .catalog import APPS, load_catalog, read_catalog
from .faults import CATEGORIES, MECHANISMS, Fault, Remedy, SymptomProbe
from .locate import catalog_dir
from .model import Catalog

__all__ = [
    "APPS",
    "CATEGORIES",
    "MECHANISMS",
    "AlertRule",
    "AlertTemplate",
    "App",
    "Catalog",
    "Edge",
    "Fault",
    "MetricSpec",
    "Remedy",
    "RequestType",
    "RulePack",
    "Service",
    "SymptomProbe",
    "catalog_dir",
    "load_catalog",
    "read_catalog",
]
