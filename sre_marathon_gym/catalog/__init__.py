"""Catalog models, loader and cross-reference validation (no simulator knowledge here)."""

from __future__ import annotations

from .alerts import AlertRule, AlertTemplate, MetricSpec, RulePack
from .apps import App, Edge, RequestType, Service
from .catalog import APPS, Catalog, load_catalog, read_catalog
from .faults import CATEGORIES, MECHANISMS, Fault, Remedy, SymptomProbe
from .locate import catalog_dir

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
