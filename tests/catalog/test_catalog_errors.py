"""A broken copy of the catalog is refused with a message naming file, entry and field."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from sre_marathon_gym.catalog import read_catalog
from sre_marathon_gym.cli.commands import main
from sre_marathon_gym.core.errors import CatalogError


def edit_faults(root: Path, app: str, edit) -> None:
    path = root / "faults" / f"{app}.yaml"
    data = yaml.safe_load(path.read_text())
    edit(data["faults"])
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def problems(root: Path) -> str:
    with pytest.raises(CatalogError) as info:
        read_catalog(root)
    return str(info.value)


def test_unknown_service_suggests_closest(catalog_copy):
    target = {}

    def typo(faults):
        target["id"] = faults[0]["id"]
        target["name"] = faults[0]["target"]
        faults[0]["target"] = faults[0]["target"][:-1]

    edit_faults(catalog_copy, "online_boutique", typo)
    msg = problems(catalog_copy)
    assert "faults/online_boutique.yaml" in msg
    assert f"faults[0] ({target['id']}).target: unknown service" in msg
    assert f"did you mean {target['name']!r}" in msg


def test_duplicate_id(catalog_copy):
    dup = {}

    def duplicate(faults):
        dup["id"] = faults[0]["id"]
        faults[1]["id"] = faults[0]["id"]

    edit_faults(catalog_copy, "train_ticket", duplicate)
    msg = problems(catalog_copy)
    assert f"faults[1] ({dup['id']}).id: duplicate id" in msg


def test_bad_probe(catalog_copy):
    def bad(faults):
        faults[2]["probe"]["kind"] = "error_rate_of_everything"

    edit_faults(catalog_copy, "astronomy_shop", bad)
    msg = problems(catalog_copy)
    assert "faults/astronomy_shop.yaml" in msg and "faults[2]" in msg and ".probe.kind" in msg


def test_probe_on_unknown_request_type(catalog_copy):
    def bad(faults):
        entry = next(f for f in faults if f["probe"].get("request_type"))
        entry["probe"]["request_type"] = "teleport"

    edit_faults(catalog_copy, "online_boutique", bad)
    assert "probe.request_type: unknown request type 'teleport'" in problems(catalog_copy)


def test_missing_field(catalog_copy):
    def drop(faults):
        del faults[3]["artifact"]

    edit_faults(catalog_copy, "online_boutique", drop)
    msg = problems(catalog_copy)
    assert "faults[3]" in msg and ".artifact: required field is missing" in msg


def test_unknown_metric_in_rule(catalog_copy):
    path = catalog_copy / "alerts" / "rules.yaml"
    data = yaml.safe_load(path.read_text())
    data["rules"][0]["metrics"] = ["http_requests_totl"]
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    assert "metrics: unknown metric 'http_requests_totl'" in problems(catalog_copy)


def test_invalid_yaml_names_line(catalog_copy):
    (catalog_copy / "scoring.yaml").write_text("schema_version: 1\nstage_weights: [\n")
    assert "scoring.yaml (line" in problems(catalog_copy)


def test_cli_validate_exits_non_zero_on_broken_copy(catalog_copy, capsys):
    edit_faults(catalog_copy, "online_boutique", lambda faults: faults[0].update(target="nosuchservice"))
    assert main(["--catalog", str(catalog_copy), "catalog", "validate"]) != 0
    assert "unknown service 'nosuchservice'" in capsys.readouterr().err


def test_cli_validate_prints_counts(capsys):
    assert main(["catalog", "validate"]) == 0
    out = capsys.readouterr().out
    assert "700 faults" in out and "44 rules from 18 templates (5 astronomy_shop only)" in out
    for app in ("online_boutique", "astronomy_shop", "train_ticket"):
        assert app in out


def test_cli_show_and_list(catalog, capsys):
    fault = catalog.faults["train_ticket"][0]
    assert main(["catalog", "show", fault.id]) == 0
    assert fault.artifact in capsys.readouterr().out
    assert main(["catalog", "list", "--app", "astronomy_shop", "--category", "network"]) == 0
    out = capsys.readouterr().out
    n = sum(1 for f in catalog.faults["astronomy_shop"] if f.category == "network")
    assert f"{n} faults" in out
    assert main(["catalog", "show", fault.id[:-1] + "x"]) != 0
    assert "unknown fault id" in capsys.readouterr().err
