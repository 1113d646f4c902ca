"""Sealed bundles: round trip, byte identity, tamper and truncation refusal, atomic writes, HMAC."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import struct
import subprocess
import sys
import threading
import time
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import sre_marathon_gym  # noqa: F401  (registers the env ids)
from sre_marathon_gym.core.errors import (
    BundleWriteError,
    CatalogMismatchError,
    IncompleteBundleError,
    SREMarathonError,
)
from sre_marathon_gym.recording import bundle as bundle_mod
from sre_marathon_gym.recording.bundle import (
    KEY_ENV,
    BundleError,
    Incomplete,
    catalog_digest,
    load_bundle,
    verify_bundle,
    write_bundle,
)
from sre_marathon_gym.recording.rescoring import score_bundles
from sre_marathon_gym.scoring import score_run


@pytest.fixture(autouse=True)
def _no_env_key(monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)


def _short_run(seed: int = 1, action_seed: int = 7):
    """A 10-minute Online Boutique run driven by a seeded random agent."""
    env = gym.make("SREMarathon/OnlineBoutique-v3", injection_minutes=6, observation_minutes=4, intensity=0.5)
    env.reset(seed=seed)
    env.action_space.seed(action_seed)
    done = False
    while not done:
        _, _, done, _, _ = env.step(env.action_space.sample())
    u = env.unwrapped
    return u.record(), u.sim.store, u.catalog


@pytest.fixture(scope="module")
def run():
    return _short_run()


@pytest.fixture(scope="module")
def sealed(run, tmp_path_factory) -> Path:
    record, store, catalog = run
    path = tmp_path_factory.mktemp("b") / "run.bundle"
    return write_bundle(path, record, store, catalog, extra={"agent": "random"})


def _flip(src: Path, dst: Path, offset: int) -> Path:
    data = bytearray(src.read_bytes())
    data[offset] ^= 0x01
    dst.write_bytes(bytes(data))
    return dst


def _data_offset(path: Path, member: str) -> tuple[int, int]:
    """(offset, length) of a member's compressed bytes inside the archive."""
    data = path.read_bytes()
    zi = zipfile.ZipFile(path).getinfo(member)
    h = zi.header_offset
    name_len = int.from_bytes(data[h + 26 : h + 28], "little")
    extra_len = int.from_bytes(data[h + 28 : h + 30], "little")
    return h + 30 + name_len + extra_len, zi.compress_size


# ------------------------------------------------------------------------------------------------ round trip
def test_round_trip_scores_and_record_equal(run, sealed):
    record, store, catalog = run
    assert record.actions, "the random agent should have acted"
    b = load_bundle(sealed)
    assert b.record == record
    assert score_run(b.record, catalog.scoring) == score_run(record, catalog.scoring)
    assert b.scoring == catalog.scoring
    assert score_run(b.record, b.scoring) == score_run(record, catalog.scoring)
    m = b.manifest
    assert m["format_version"] == 1 and m["seal"] == "sha256"
    assert m["run"]["app"] == "online_boutique" and m["run"]["seed"] == 1
    assert m["catalog_version"] == catalog_digest(catalog)
    assert m["package_version"] == sre_marathon_gym.__version__
    assert b.extra == {"agent": "random"}
    assert b.info.seal_kind == "sha256" and b.info.size == sealed.stat().st_size
    assert set(b.info.members) == {"record.json", "scoring.json", "telemetry.json", "telemetry.bin"}


def test_round_trip_telemetry(run, sealed):
    _, store, _ = run
    tel = load_bundle(sealed).telemetry
    live = list(store.iter_samples())
    assert len(tel) == len(live) > 0
    for (n1, l1, t1, v1), (n2, l2, t2, v2) in zip(live, tel.series()):
        assert (n1, l1) == (n2, l2)
        np.testing.assert_array_equal(t1, t2)
        np.testing.assert_array_equal(v1, v2)
    rebuilt = tel.metric_store()
    for (n1, l1, t1, v1), (n2, l2, t2, v2) in zip(live, rebuilt.iter_samples()):
        assert (n1, l1) == (n2, l2)
        np.testing.assert_array_equal(t1, t2)
        np.testing.assert_array_equal(v1, v2)
    name = live[0][0]
    t = float(store.last_time)

    # the same values at t per label set; a series the run never wrote is not in the bundle
    def values(st):
        ids = st.select(name)
        return {
            tuple(sorted(st.labels(int(i)).items())): v for i, v in zip(ids.tolist(), st.at(ids, t).tolist())
        }

    live_at, rebuilt_at = values(store), values(rebuilt)
    assert {k: v for k, v in live_at.items() if k in rebuilt_at} == rebuilt_at
    assert all(np.isnan(v) for k, v in live_at.items() if k not in rebuilt_at)


def test_score_bundles(run, sealed, tmp_path):
    record, _, catalog = run
    other = write_bundle(tmp_path / "no_tel.bundle", record)  # no telemetry, no catalog
    cards = score_bundles([sealed, other], catalog)
    live = score_run(record, catalog.scoring)
    assert cards == [live, live]
    assert score_bundles([sealed]) == [live]  # weights sealed in the bundle
    assert load_bundle(other).telemetry is None and load_bundle(other).scoring is None


# ------------------------------------------------------------------------------------------------ determinism
def test_same_seed_same_actions_byte_identical(run, sealed, tmp_path):
    record, store, catalog = _short_run()
    again = write_bundle(tmp_path / "again.bundle", record, store, catalog, extra={"agent": "random"})
    assert again.read_bytes() == sealed.read_bytes()
    other = write_bundle(tmp_path / "other.bundle", *_short_run(seed=2)[:2])
    assert other.read_bytes() != sealed.read_bytes()


def test_zip_members_are_canonical(sealed):
    zf = zipfile.ZipFile(sealed)
    assert zf.namelist() == [
        "manifest.json",
        "record.json",
        "scoring.json",
        "telemetry.json",
        "telemetry.bin",
        "seal",
    ]
    for zi in zf.infolist():
        assert zi.date_time == (1980, 1, 1, 0, 0, 0)
        assert zi.external_attr >> 16 == 0o100644
        assert zi.compress_type == zipfile.ZIP_DEFLATED
    manifest = zf.read("manifest.json")
    assert (
        manifest
        == json.dumps(
            json.loads(manifest), sort_keys=True, separators=(",", ":"), ensure_ascii=False
        ).encode()
    )


# ------------------------------------------------------------------------------------------------ tampering
def _offsets(sealed: Path) -> dict[str, int]:
    data = sealed.read_bytes()
    zf = zipfile.ZipFile(sealed)
    rec_off, rec_len = _data_offset(sealed, "record.json")
    bin_off, bin_len = _data_offset(sealed, "telemetry.bin")
    cd = data.rindex(b"PK\x01\x02")  # last central-directory entry (the seal's)
    first_cd = data.index(b"PK\x01\x02")
    return {
        "first_byte": 0,
        "manifest_local_header_time": zf.getinfo("manifest.json").header_offset + 10,
        "manifest_data": _data_offset(sealed, "manifest.json")[0] + 5,
        "record_compressed_data": rec_off + rec_len // 2,
        "telemetry_compressed_data": bin_off + bin_len // 3,
        "telemetry_compressed_tail": bin_off + bin_len - 2,
        "central_directory_time": first_cd + 12,
        "central_directory_attrs": cd + 40,
        "central_directory_name": cd + 46,
        "seal_data": _data_offset(sealed, "seal")[0] + 3,
        "end_record": len(data) - 22 - 93 + 10,
        "zip_comment": len(data) - 70,
        "checksum_hex": len(data) - 1,
    }


@pytest.mark.parametrize(
    "where",
    [
        "first_byte",
        "manifest_local_header_time",
        "manifest_data",
        "record_compressed_data",
        "telemetry_compressed_data",
        "telemetry_compressed_tail",
        "central_directory_time",
        "central_directory_attrs",
        "central_directory_name",
        "seal_data",
        "end_record",
        "zip_comment",
        "checksum_hex",
    ],
)
def test_flipped_byte_refused(sealed, tmp_path, where):
    bad = _flip(sealed, tmp_path / "bad.bundle", _offsets(sealed)[where])
    with pytest.raises(BundleError):
        verify_bundle(bad)
    with pytest.raises(BundleError):
        load_bundle(bad)


def test_flipped_byte_messages_name_the_part(sealed, tmp_path):
    off = _offsets(sealed)
    with pytest.raises(BundleError, match="record.json"):
        verify_bundle(_flip(sealed, tmp_path / "a", off["record_compressed_data"]))
    with pytest.raises(BundleError, match="telemetry.bin"):
        verify_bundle(_flip(sealed, tmp_path / "b", off["telemetry_compressed_data"]))
    with pytest.raises(BundleError, match="container checksum mismatch"):
        verify_bundle(_flip(sealed, tmp_path / "c", off["central_directory_time"]))


def test_flipped_byte_anywhere_refused(sealed, tmp_path):
    """A sweep of evenly spaced offsets across the whole file: every single flip is refused."""
    size = sealed.stat().st_size
    for offset in np.linspace(0, size - 1, 97).astype(int).tolist():
        bad = _flip(sealed, tmp_path / "sweep.bundle", offset)
        with pytest.raises(BundleError):
            verify_bundle(bad)


def _rebuild(
    src: Path, dst: Path, *, record_edit=None, manifest_edit=None, reseal: bool, key: str | None = None
):
    """Re-pack a bundle after editing record.json, as a naive editor (reseal=False) or a forger (True)."""
    zf = zipfile.ZipFile(src)
    members = {n: zf.read(n) for n in zf.namelist()}
    if record_edit is not None:
        rec = json.loads(members["record.json"])
        record_edit(rec)
        members["record.json"] = bundle_mod.canonical_json(rec, "record")
    if reseal:
        manifest = json.loads(members["manifest.json"])
        for m in manifest["members"]:
            m["sha256"] = bundle_mod._sha256(members[m["name"]])
            m["size"] = len(members[m["name"]])
        if manifest_edit is not None:
            manifest_edit(manifest)
        members["manifest.json"] = bundle_mod.canonical_json(manifest, "manifest")
        members["seal"] = bundle_mod._seal_bytes(members["manifest.json"], bundle_mod._resolve_key(key))
    dst.write_bytes(bundle_mod._zip_bytes(list(members.items())))
    return dst


def _drop_faults(rec: dict) -> None:
    """A consistent record without faults (the changes they shipped go with them)."""
    rec["faults"], rec["probes"], rec["artifact_fixed"] = [], [], {}
    rec["changes"] = [c for c in rec.get("changes", []) if c["fault_id"] is None]


def test_naive_edit_refused(sealed, tmp_path):
    bad = _rebuild(sealed, tmp_path / "edited.bundle", record_edit=_drop_faults, reseal=False)
    with pytest.raises(BundleError, match="member 'record.json' hash mismatch"):
        load_bundle(bad)


def test_forger_beats_plain_seal_but_not_hmac(run, tmp_path):
    """Documented limit: the sha256 seal is recomputable; only an HMAC key resists forgery."""
    record, _, _ = run
    plain = write_bundle(tmp_path / "plain.bundle", record)
    forged = _rebuild(plain, tmp_path / "forged.bundle", record_edit=_drop_faults, reseal=True)
    assert load_bundle(forged).record.faults == []  # accepted: the plain seal is not a signature

    keyed = write_bundle(tmp_path / "keyed.bundle", record, key="maintainer-secret")
    forged = _rebuild(keyed, tmp_path / "forged2.bundle", record_edit=_drop_faults, reseal=True, key="guess")
    with pytest.raises(BundleError, match="seal mismatch"):
        load_bundle(forged, key="maintainer-secret")
    downgraded = _rebuild(
        keyed,
        tmp_path / "forged3.bundle",
        record_edit=_drop_faults,
        reseal=True,
        manifest_edit=lambda m: m.update(seal="sha256"),
    )
    with pytest.raises(BundleError, match="plain sha256 seal"):
        load_bundle(downgraded, key="maintainer-secret")


def test_unsupported_format_version(run, tmp_path):
    plain = write_bundle(tmp_path / "plain.bundle", run[0])
    future = _rebuild(
        plain, tmp_path / "v2.bundle", reseal=True, manifest_edit=lambda m: m.update(format_version=2)
    )
    with pytest.raises(BundleError, match="format version 2 is unsupported"):
        verify_bundle(future)


# ---------------------------------------------------------------------------------- truncation / not a bundle
@pytest.mark.parametrize("keep", [0.5, 0.99, -1, -22, -200, 10])
def test_truncated_refused(sealed, tmp_path, keep):
    data = sealed.read_bytes()
    n = int(len(data) * keep) if isinstance(keep, float) else (len(data) + keep if keep < 0 else keep)
    bad = tmp_path / "trunc.bundle"
    bad.write_bytes(data[:n])
    with pytest.raises(BundleError, match="truncated"):
        verify_bundle(bad)


def test_trailing_data_refused(sealed, tmp_path):
    bad = tmp_path / "trailing.bundle"
    bad.write_bytes(sealed.read_bytes() + b"\n")
    with pytest.raises(BundleError, match="trailing data"):
        verify_bundle(bad)


def test_not_a_bundle(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("hello, I am not a bundle\n")
    with pytest.raises(BundleError, match="not a bundle: not a ZIP archive"):
        verify_bundle(text)
    empty = tmp_path / "empty.bundle"
    empty.write_bytes(b"")
    with pytest.raises(BundleError, match="not a bundle"):
        verify_bundle(empty)
    plain_zip = tmp_path / "plain.zip"
    with zipfile.ZipFile(plain_zip, "w") as zf:
        zf.writestr("readme.txt", "just a zip")
    with pytest.raises(BundleError, match="not a bundle"):
        verify_bundle(plain_zip)
    with pytest.raises(BundleError, match="cannot read"):
        verify_bundle(tmp_path / "missing.bundle")
    assert issubclass(BundleError, SREMarathonError)


# ------------------------------------------------------------------------------------------------ atomicity
def _interrupt_half_way(fh, data):
    fh.write(data[: len(data) // 2])
    raise KeyboardInterrupt("simulated interruption mid-write")


@pytest.mark.parametrize("failure", ["write", "fsync", "replace"])
def test_interrupted_write_leaves_nothing(run, tmp_path, monkeypatch, failure):
    record, store, catalog = run
    out = tmp_path / "out"
    out.mkdir()
    target = out / "run.bundle"
    if failure == "write":
        monkeypatch.setattr(bundle_mod, "_write_all", _interrupt_half_way)
        exc: type[BaseException] = KeyboardInterrupt
    else:

        def boom(*a, **k):
            raise OSError(f"simulated {failure} failure")

        monkeypatch.setattr(bundle_mod.os, failure, boom)
        exc = OSError
    with pytest.raises(exc):
        write_bundle(target, record, store, catalog)
    assert list(out.iterdir()) == []


def test_interrupted_overwrite_keeps_previous_bundle(run, tmp_path, monkeypatch):
    record, store, catalog = run
    target = write_bundle(tmp_path / "run.bundle", record)
    before = target.read_bytes()
    monkeypatch.setattr(bundle_mod, "_write_all", _interrupt_half_way)
    with pytest.raises(KeyboardInterrupt):
        write_bundle(target, record, store, catalog)
    assert target.read_bytes() == before
    verify_bundle(target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.bundle"]


def test_write_errors(run, tmp_path):
    with pytest.raises(BundleError, match="does not exist"):
        write_bundle(tmp_path / "nope" / "run.bundle", run[0])
    with pytest.raises(BundleError, match="extra"):
        write_bundle(tmp_path / "run.bundle", run[0], extra={"bad": object()})
    assert not (tmp_path / "run.bundle").exists()


# ------------------------------------------------------------------------------------------------ HMAC
def test_hmac_seal(run, tmp_path, monkeypatch):
    record, store, catalog = run
    keyed = write_bundle(tmp_path / "keyed.bundle", record, store, catalog, key="s3cret")
    info = verify_bundle(keyed, key="s3cret")
    assert info.seal_kind == "hmac-sha256"
    assert load_bundle(keyed, key=b"s3cret").record == record
    with pytest.raises(BundleError, match="seal mismatch"):
        verify_bundle(keyed, key="wrong")
    with pytest.raises(BundleError, match="HMAC-sealed"):
        verify_bundle(keyed)
    with pytest.raises(BundleError, match="plain sha256 seal"):
        verify_bundle(write_bundle(tmp_path / "plain.bundle", record), key="s3cret")

    monkeypatch.setenv(KEY_ENV, "s3cret")
    assert verify_bundle(keyed).seal_kind == "hmac-sha256"
    env_keyed = write_bundle(tmp_path / "env.bundle", record, store, catalog)
    assert env_keyed.read_bytes() == keyed.read_bytes()
    monkeypatch.setenv(KEY_ENV, "other")
    with pytest.raises(BundleError, match="seal mismatch"):
        verify_bundle(keyed)


# -------------------------------------------------------------------------------------------- catalog digest
def test_catalog_digest_tracks_content(catalog, catalog_copy):
    assert catalog_digest(catalog) == catalog_digest(catalog_copy)
    assert catalog_digest(catalog).startswith("sha256:")
    scoring = catalog_copy / "scoring.yaml"
    scoring.write_text(scoring.read_text() + "\n# edited\n")
    assert catalog_digest(catalog_copy) != catalog_digest(catalog)


# ------------------------------------------------------------------------------------------------ rule sets
OLD_BUNDLE = Path(__file__).parent / "data" / "online_boutique-runbook-3-v1.bundle"


def test_old_bundle_rescores_under_v1_unchanged():
    """A bundle sealed by the package before rule sets were versioned (commit 0897c1d, Online
    Boutique, runbook, seed 3, 20 + 10 minutes) rescores under rules v1, the version it was scored
    under, to exactly the card that code printed; `--rules v2` rescores it soundly."""
    old = json.loads(OLD_BUNDLE.with_suffix(".card.json").read_text())
    bundle = load_bundle(OLD_BUNDLE)
    assert bundle.scoring is not None and bundle.scoring.rules_version == 1
    (card,) = score_bundles([OLD_BUNDLE])
    assert card.rules_version == 1
    assert {k: v for k, v in card.model_dump(mode="json").items() if k in old} == old
    (v2,) = score_bundles([OLD_BUNDLE], rules=2)
    assert v2.rules_version == 2 and v2.marathon_score < card.marathon_score
    assert v2.false_claims > 0  # the literal runbook re-named root causes the v2 rules price


OLD_V2_BUNDLE = Path(__file__).parent / "data" / "online_boutique-runbook-3-v2.bundle"


def test_old_v2_bundle_rescores_under_v2_unchanged():
    """A bundle sealed under rules v2 (commit 1751ba7, Online Boutique, runbook, seed 3, 20 + 10
    minutes) rescores under v2, its sealed rules, to exactly the card that code printed; `--rules v3`
    rescores it, its manifest given the catalog's scope shares it was sealed without."""
    old = json.loads(OLD_V2_BUNDLE.with_suffix(".card.json").read_text())
    bundle = load_bundle(OLD_V2_BUNDLE)
    assert bundle.scoring is not None and bundle.scoring.rules_version == 2
    assert bundle.record.manifest.scope_share == {}
    (card,) = score_bundles([OLD_V2_BUNDLE])
    assert card.rules_version == 2
    assert {k: v for k, v in card.model_dump(mode="json").items() if k in old} == old
    (v3,) = score_bundles([OLD_V2_BUNDLE], rules=3)
    assert v3.rules_version == 3 and v3.faults == card.faults


def test_new_bundles_seal_rules_v3(run, sealed):
    record, _, catalog = run
    b = load_bundle(sealed)
    assert b.scoring is not None and b.scoring.rules_version == 3 and b.scoring.penalties is not None
    assert b.record.manifest.scope_share == catalog.scope_share(record.manifest.app)
    (card,) = score_bundles([sealed])
    assert card == score_run(record, catalog.scoring) and card.rules_version == 3
    (v1,) = score_bundles([sealed], rules=1)
    assert v1.rules_version == 1 and v1 == score_run(record, catalog.scoring.with_rules(1))
    (v2,) = score_bundles([sealed], rules=2)
    assert v2.rules_version == 2 and v2 == score_run(record, catalog.scoring.with_rules(2))


# ---------------------------------------------------------------------------------------------- completeness
def test_new_bundles_seal_their_completeness(run, sealed):
    assert load_bundle(sealed).manifest["completeness"] == {"complete": True}
    assert verify_bundle(sealed).complete and verify_bundle(sealed).incomplete is None


def test_old_bundle_without_the_field_counts_as_complete():
    info = verify_bundle(OLD_BUNDLE)
    assert "completeness" not in info.manifest
    assert info.complete and info.describe_incomplete() == ""
    assert info.catalog_digest == "sha256:c67369e1b019de5b775841474f55d22e361b76d460378d6e60dab477232dda0a"


def test_incomplete_is_sealed_so_a_rename_does_not_hide_it(run, tmp_path):
    """A partial run is refused a Marathon-Score whatever its file is called; allow_incomplete scores it."""
    record, store, catalog = run
    partial = write_bundle(
        tmp_path / "run.incomplete.bundle",
        record,
        store,
        catalog,
        incomplete=Incomplete(360.0, "KeyboardInterrupt"),
    )
    renamed = partial.rename(tmp_path / "run.bundle")
    info = verify_bundle(renamed)
    assert not info.complete and info.incomplete == Incomplete(360.0, "KeyboardInterrupt")
    assert info.describe_incomplete() == "interrupted at t=360 s of 600 s: KeyboardInterrupt"
    with pytest.raises(IncompleteBundleError, match=r"INCOMPLETE \(interrupted at t=360 s of 600 s"):
        score_bundles([renamed])
    (card,) = score_bundles([renamed], allow_incomplete=True)
    assert card == score_run(record, catalog.scoring)


def test_incomplete_reason_from_an_exception():
    assert Incomplete.from_exception(12.0, KeyboardInterrupt()) == Incomplete(12.0, "KeyboardInterrupt")
    reason = Incomplete.from_exception(None, ValueError("two\nlines " + "x" * 900)).reason
    assert reason.startswith("ValueError: two lines x") and len(reason) == 500
    assert Incomplete(None, "").describe(600) == "interrupted at an unknown time"


def test_completeness_cannot_be_edited_without_resealing(run, tmp_path):
    partial = write_bundle(tmp_path / "p.bundle", run[0], incomplete=Incomplete(120.0, "RuntimeError: x"))
    members = dict(_members(partial))
    manifest = json.loads(members["manifest.json"])
    manifest["completeness"] = {"complete": True}
    members["manifest.json"] = bundle_mod.canonical_json(manifest, "manifest")
    edited = tmp_path / "edited.bundle"
    edited.write_bytes(bundle_mod._zip_bytes(list(members.items())))
    with pytest.raises(BundleError, match="seal mismatch"):
        verify_bundle(edited)


def test_save_incomplete_marks_the_bundle(tmp_path):
    """`save_incomplete` (what `run_one` and the CLI call when a run fails) seals the time reached."""
    from sre_marathon_gym.agents import NoopAgent
    from sre_marathon_gym.evaluation.leaderboard import save_incomplete

    env = gym.make("SREMarathon/OnlineBoutique-v3", injection_minutes=6, observation_minutes=4)
    env.reset(seed=1)
    for _ in range(2):
        env.step(None)
    path = save_incomplete(
        env, NoopAgent(), env.unwrapped.catalog, tmp_path / "x.incomplete.bundle", RuntimeError("agent bug")
    )
    info = verify_bundle(path)
    assert info.incomplete == Incomplete(360.0, "RuntimeError: agent bug")
    assert load_bundle(path).extra["incomplete"] == "RuntimeError: agent bug"


# -------------------------------------------------------------------------------------------- catalog digest
def test_scoring_under_another_catalog_is_refused_unless_asked(run, sealed, catalog_copy):
    from sre_marathon_gym.catalog import load_catalog

    record, _, catalog = run
    (scoring := catalog_copy / "scoring.yaml").write_text(scoring.read_text() + "\n# edited\n")
    other = load_catalog(catalog_copy)
    with pytest.raises(CatalogMismatchError, match=r"the run used catalog sha256:.* but the catalog given"):
        score_bundles([sealed], other)
    assert score_bundles([sealed], other, rescore_with_catalog=True) == [score_run(record, other.scoring)]
    assert score_bundles([sealed], catalog) == [score_run(record, catalog.scoring)]  # the same catalog


def test_without_sealed_weights_the_shipped_catalog_must_be_the_runs(run, tmp_path):
    """A bundle written without a catalog has no weights; the shipped catalog scores it only if the
    run used it (the record carries the digest), else the score would be silently another one."""
    record, _, catalog = run
    same = write_bundle(tmp_path / "same.bundle", record)
    assert score_bundles([same]) == [score_run(record, catalog.scoring)]
    foreign = record.model_copy(deep=True)
    foreign.manifest.catalog_version = "sha256:" + "0" * 64
    path = write_bundle(tmp_path / "foreign.bundle", foreign)
    assert verify_bundle(path).catalog_digest == "sha256:" + "0" * 64
    with pytest.raises(CatalogMismatchError, match="seals no scoring weights"):
        score_bundles([path])
    with pytest.raises(CatalogMismatchError):
        score_bundles([path], catalog)
    assert score_bundles([path], rescore_with_catalog=True) == [score_run(foreign, catalog.scoring)]


def test_write_refuses_a_catalog_the_run_did_not_use(run, tmp_path, catalog_copy):
    from sre_marathon_gym.catalog import load_catalog

    record, store, _ = run
    (scoring := catalog_copy / "scoring.yaml").write_text(scoring.read_text() + "\n# edited\n")
    with pytest.raises(BundleError, match="the run used catalog"):
        write_bundle(tmp_path / "x.bundle", record, store, load_catalog(catalog_copy))
    assert not (tmp_path / "x.bundle").exists()


# ------------------------------------------------------------------------------------------- bounded reading
def _members(path: Path) -> list[tuple[str, bytes]]:
    zf = zipfile.ZipFile(path)
    return [(n, zf.read(n)) for n in zf.namelist()]


def _raw_bundle(
    members: list[tuple[str, bytes]],
    fields: dict[str, dict] | None = None,
    eocd: dict | None = None,
    before_eocd: bytes = b"",
) -> bytes:
    """A bundle-shaped ZIP written field by field, so that any header field can be wrong on purpose.

    `fields[name]` overrides a member's version, flags, method, crc, size (declared uncompressed) or
    data (the compressed bytes); `eocd` overrides the end record's entries or cd_size. The container
    checksum is always correct: a forger can recompute it, so the reader must cope with the rest."""
    out, cd = bytearray(), bytearray()
    for name, body in members:
        comp = zlib.compressobj(6, zlib.DEFLATED, -15)
        f = {
            "version": 20,
            "flags": 0,
            "method": 8,
            "crc": zlib.crc32(body),
            "size": len(body),
            "data": comp.compress(body) + comp.flush(),
            **(fields or {}).get(name, {}),
        }
        raw = name.encode()
        common = (
            f["version"],
            f["flags"],
            f["method"],
            0,
            0x21,
            f["crc"],
            len(f["data"]),
            f["size"],
            len(raw),
        )
        offset = len(out)
        out += struct.pack("<4s5H3I2H", b"PK\x03\x04", *common, 0) + raw + f["data"]
        cd += (
            struct.pack("<4s6H3I5HII", b"PK\x01\x02", 0x0314, *common, 0, 0, 0, 0, 0o100644 << 16, offset)
            + raw
        )
    cd_offset = len(out)
    out += cd + before_eocd
    end = {"entries": len(members), "cd_size": len(cd) + len(before_eocd), **(eocd or {})}
    comment = bundle_mod._COMMENT_PREFIX + b"0" * 64
    out += (
        struct.pack(
            "<4s4H2IH",
            b"PK\x05\x06",
            0,
            0,
            end["entries"],
            end["entries"],
            end["cd_size"],
            cd_offset,
            len(comment),
        )
        + comment
    )
    out[-64:] = hashlib.sha256(bytes(out[:-64])).hexdigest().encode()
    return bytes(out)


def _resealed(members: list[tuple[str, bytes]], edit) -> list[tuple[str, bytes]]:
    """`members` with the manifest edited by `edit(manifest_dict)` and the plain seal recomputed."""
    d = dict(members)
    manifest = json.loads(d["manifest.json"])
    edit(manifest)
    d["manifest.json"] = json.dumps(manifest).encode()
    d["seal"] = bundle_mod._seal_bytes(d["manifest.json"], None)
    return list(d.items())


def _set_member(members, name, body):
    return [(n, body if n == name else b) for n, b in members]


def test_raw_bundle_writer_makes_bundles_that_verify(tmp_path):
    """The helper itself is sound: unchanged, its output verifies like the original."""
    path = tmp_path / "raw.bundle"
    path.write_bytes(_raw_bundle(_members(OLD_BUNDLE)))
    assert verify_bundle(path).members == verify_bundle(OLD_BUNDLE).members
    assert score_bundles([path]) == score_bundles([OLD_BUNDLE])


def _nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


MALFORMED = {
    # header fields (zipfile raised RuntimeError, NotImplementedError or LZMAError for some of these)
    "encrypted flag": {"fields": {"record.json": {"flags": 0x1}}},
    "strong encryption flag": {"fields": {"manifest.json": {"flags": 0x41}}},
    "data descriptor flag": {"fields": {"seal": {"flags": 0x8}}},
    "zip version 6.4": {"fields": {"record.json": {"version": 64}}},
    "zip version 4.5": {"fields": {"scoring.json": {"version": 45}}},
    "method lzma": {"fields": {"record.json": {"method": 14}}},
    "method bzip2": {"fields": {"manifest.json": {"method": 12}}},
    "method unknown": {"fields": {"record.json": {"method": 99}}},
    "method stored": {"fields": {"seal": {"method": 0}}},
    "wrong crc": {"fields": {"record.json": {"crc": 1}}},
    "declared size smaller": {"fields": {"record.json": {"size": 10}}},
    "declared size larger": {"fields": {"record.json": {"size": 10**8}}},
    "declared size huge": {"fields": {"record.json": {"size": 0xFFFFFFFE}}},
    "compressed data cut": {"fields": {"record.json": {"data": zlib.compress(b"{}")[2:5]}}},
    "not deflate data": {"fields": {"manifest.json": {"data": b"\xff" * 40}}},
    "entry count high": {"eocd": {"entries": 5}},
    "entry count zero": {"eocd": {"entries": 0}},
    "entry count huge": {"eocd": {"entries": 65535}},
    "central directory size wrong": {"eocd": {"cd_size": 10}},
    "zip64 locator": {"before_eocd": b"PK\x06\x07" + b"\x00" * 16},
    # member contents with a recomputed seal (the plain seal is not a signature)
    "seal not ascii": {"members": lambda m: _set_member(m, "seal", "sha256:é\n".encode())},
    "seal binary": {"members": lambda m: _set_member(m, "seal", b"\xff" * 70)},
    "seal huge": {"members": lambda m: _set_member(m, "seal", b"sha256:" + b"0" * 5000)},
    "manifest not json": {"members": lambda m: _set_member(m, "manifest.json", b"\xff\xfe{")},
    "manifest nested": {"members": lambda m: _set_member(m, "manifest.json", _nested(100_000))},
    "format_version list": {"members": lambda m: _resealed(m, lambda d: d.update(format_version=[1]))},
    "format_version bool": {"members": lambda m: _resealed(m, lambda d: d.update(format_version=True))},
    "seal kind list": {"members": lambda m: _resealed(m, lambda d: d.update(seal=["sha256"]))},
    "member size infinite": {
        "members": lambda m: _resealed(m, lambda d: d["members"][0].update(size=float("inf")))
    },
    "member size text": {"members": lambda m: _resealed(m, lambda d: d["members"][0].update(size="12"))},
    "member hash number": {"members": lambda m: _resealed(m, lambda d: d["members"][0].update(sha256=5))},
    "member name list": {"members": lambda m: _resealed(m, lambda d: d["members"][0].update(name=["x"]))},
    "members object": {"members": lambda m: _resealed(m, lambda d: d.update(members={"a": 1}))},
    "members listed twice": {
        "members": lambda m: _resealed(m, lambda d: d["members"].append(d["members"][0]))
    },
    "completeness text": {"members": lambda m: _resealed(m, lambda d: d.update(completeness="no"))},
    "completeness time text": {
        "members": lambda m: _resealed(
            m, lambda d: d.update(completeness={"complete": False, "reached_s": "late"})
        )
    },
    "extra list": {"members": lambda m: _resealed(m, lambda d: d.update(extra=[1, 2]))},
    "run number": {"members": lambda m: _resealed(m, lambda d: d.update(run=5))},
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_archive_raises_bundle_error(tmp_path, case):
    """Every malformed archive, even one whose checksum and seal were recomputed, is a BundleError."""
    spec = MALFORMED[case]
    members = spec.get("members", lambda m: m)(_members(OLD_BUNDLE))
    path = tmp_path / "bad.bundle"
    path.write_bytes(_raw_bundle(members, spec.get("fields"), spec.get("eocd"), spec.get("before_eocd", b"")))
    with pytest.raises(BundleError) as err:
        load_bundle(path)
    assert "\n" not in str(err.value)


def test_forged_contents_that_do_not_decode_raise_bundle_error(tmp_path):
    """Members re-hashed and resealed by a forger, but not a RunRecord / not telemetry: one-line errors."""
    members = _members(OLD_BUNDLE)

    def reseal_members(ms):
        def edit(d):
            for m in d["members"]:
                m["sha256"] = bundle_mod._sha256(dict(ms)[m["name"]])
                m["size"] = len(dict(ms)[m["name"]])

        return _resealed(ms, edit)

    bad_record = reseal_members(_set_member(members, "record.json", b'{"faults": 5}'))
    path = tmp_path / "rec.bundle"
    path.write_bytes(_raw_bundle(bad_record))
    with pytest.raises(BundleError, match=r"does not validate as a RunRecord: \d+ problem\(s\)") as err:
        load_bundle(path)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    "index",
    [
        b'{"dtype": "<f8", "n_samples": Infinity, "series": [], "start_s": 0, "step_s": 15}',
        b'{"dtype": "<i8", "n_samples": 1, "series": [], "start_s": 0, "step_s": 15}',
        b'{"dtype": 5, "n_samples": 1, "series": [], "start_s": 0, "step_s": 15}',
        b'{"dtype": "<f8", "n_samples": 1, "series": [["x", "ab"]], "start_s": 0, "step_s": 15}',
        b'{"dtype": "<f8", "n_samples": 1, "series": [7], "start_s": 0, "step_s": 15}',
        b"[1, 2]",
        _nested(100_000),
    ],
)
def test_forged_telemetry_that_does_not_decode_raises_bundle_error(tmp_path, index):
    members = _members(OLD_BUNDLE)
    members = [*members[:-1], ("telemetry.json", index), ("telemetry.bin", b"\x00" * 8), members[-1]]

    def list_telemetry(d):
        for name in ("telemetry.json", "telemetry.bin"):
            body = dict(members)[name]
            d["members"].append({"name": name, "sha256": bundle_mod._sha256(body), "size": len(body)})

    path = tmp_path / "tel.bundle"
    path.write_bytes(_raw_bundle(_resealed(members, list_telemetry)))
    verify_bundle(path)  # the container and the seal are fine: only decoding can fail
    with pytest.raises(BundleError, match="telemetry members are inconsistent") as err:
        load_bundle(path)
    assert "\n" not in str(err.value)


def test_non_regular_files_are_refused_at_once(tmp_path):
    """/dev/zero (an endless stream), a FIFO without a writer and a directory: refused, not read."""
    fifo = tmp_path / "fifo.bundle"
    os.mkfifo(fifo)
    for target in (Path("/dev/zero"), fifo, tmp_path):
        result: list[BaseException] = []
        worker = threading.Thread(target=_capture, args=(result, verify_bundle, target), daemon=True)
        worker.start()
        worker.join(timeout=10)
        assert not worker.is_alive(), f"reading {target} blocked"
        assert isinstance(result[0], BundleError) and "not a regular file" in str(result[0])


def _capture(result: list, fn, *args) -> None:
    try:
        fn(*args)
    except BaseException as exc:  # noqa: BLE001 - the test inspects it
        result.append(exc)


def test_a_file_larger_than_the_limit_is_refused_before_reading(tmp_path):
    big = tmp_path / "big.bundle"
    with big.open("wb") as fh:  # sparse: no disk space, nothing to read
        fh.truncate(bundle_mod.MAX_BUNDLE_BYTES + 1)
    with pytest.raises(BundleError, match="more than the 536870912 a bundle may have"):
        verify_bundle(big)


def _zip_bomb_members(declared: int | None) -> tuple[list[tuple[str, bytes]], dict]:
    """A ~1 MB DEFLATE stream of 1 GiB of zeros as record.json, declaring `declared` bytes (honest: 1 GiB)."""
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = comp.compress(bytes(1 << 20)) + comp.flush(zlib.Z_FULL_FLUSH)
    block = comp.compress(bytes(1 << 20)) + comp.flush(zlib.Z_FULL_FLUSH)  # the steady-state block
    data = block * 1024 + comp.flush()
    members = _members(OLD_BUNDLE)
    size = 1 << 30 if declared is None else declared
    members = _resealed(members, lambda d: d["members"][0].update(size=size))
    return members, {"record.json": {"data": data, "size": size}}


BOMB_SCRIPT = """
import sys
from sre_marathon_gym.recording.bundle import BundleError, verify_bundle
try:
    verify_bundle(sys.argv[1])
    print("verified")
except BundleError as exc:
    print("BundleError", exc)
# VmHWM is this process's own peak: ru_maxrss would carry the forking test process's size across exec
print(next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:")) // 1024)
"""


@pytest.mark.parametrize("declared", [None, 190263], ids=["honest-1GiB", "lying-small"])
def test_zip_bomb_is_refused_without_inflating_it(tmp_path, declared):
    """A 1 MB bundle-shaped ZIP that inflates to 1 GiB: refused from its declared size (honest), or read
    only up to its declared size (lying); either way the reading process stays far below 1 GiB."""
    members, fields = _zip_bomb_members(declared)
    bomb = tmp_path / "bomb.bundle"
    bomb.write_bytes(_raw_bundle(members, fields))
    assert bomb.stat().st_size < 1_200_000
    repo = Path(__file__).resolve().parents[1]
    proc = subprocess.run(
        [sys.executable, "-c", BOMB_SCRIPT, str(bomb)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(repo)},
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    message, peak_mib = proc.stdout.strip().splitlines()
    assert message.startswith("BundleError")
    if declared is None:
        assert "declare more than" in message and "ZIP bomb" in message
    assert int(peak_mib) < 300, message


def _flip_in_place(path: Path, offsets, mask) -> Iterator[int]:
    """Flip one byte at a time in `path` (restored after each yield): one open file, no rewrites."""
    fd = os.open(path, os.O_RDWR)
    try:
        for offset in offsets:
            original = os.pread(fd, 1, offset)
            os.pwrite(fd, bytes([original[0] ^ mask(offset)]), offset)
            try:
                yield offset
            finally:
                os.pwrite(fd, original, offset)
    finally:
        os.close(fd)


def test_every_single_byte_flip_verifies_identically_or_raises_bundle_error(run, tmp_path):
    """Every byte of a small real bundle, flipped with a rotating mask: BundleError or, if a flip were
    harmless, the same verification result. Never another exception type."""
    record, _, catalog = run
    small = record.model_copy(deep=True)
    for name in ("alerts", "probes", "incident_events", "actions"):
        setattr(small, name, getattr(small, name)[:3])
    path = write_bundle(tmp_path / "small.bundle", small, catalog=catalog)
    size = path.stat().st_size
    assert size < 8_000, size
    expected = verify_bundle(path)
    refused = 0
    for offset in _flip_in_place(path, range(size), lambda o: (0x01, 0x80, 0xFF, 0x10, 0x40)[o % 5]):
        try:
            info = verify_bundle(path)
        except BundleError:
            refused += 1
        else:
            assert (info.manifest, info.members) == (expected.manifest, expected.members), offset
    assert refused == size  # the container checksum covers every byte
    assert verify_bundle(path) == expected


def test_large_sample_of_flips_in_a_bundle_with_telemetry(sealed, tmp_path):
    """A deterministic sample of offsets across the full bundle (telemetry included), and its whole tail."""
    path = tmp_path / "copy.bundle"
    path.write_bytes(sealed.read_bytes())
    size = path.stat().st_size
    offsets = sorted(
        set(np.random.default_rng(1234).integers(0, size, 2000).tolist())
        | set(range(max(0, size - 600), size))
    )
    for _ in _flip_in_place(path, offsets, lambda o: 0xFF):
        with pytest.raises(BundleError):
            load_bundle(path)
    load_bundle(path)


# ----------------------------------------------------------------------------------------------- stale temps
def _tmp_name(target: str, tag: str = "abcd1234") -> str:
    return f".{target}.{tag}.tmp"


def test_stale_temp_files_of_killed_writes_are_removed(run, tmp_path):
    record = run[0]
    now = time.time()
    stale, fresh = tmp_path / _tmp_name("a.bundle"), tmp_path / _tmp_name("b.bundle", "zz_9x8y7")
    other, link, folder = (
        tmp_path / ".notes.abcd1234.tmp",
        tmp_path / _tmp_name("c.bundle"),
        tmp_path / _tmp_name("d.bundle"),
    )
    for p in (stale, fresh, other):
        p.write_bytes(b"partial")
    link.symlink_to(other)
    folder.mkdir()
    for p in (stale, other, folder):
        os.utime(p, (now - 3600, now - 3600))
    os.utime(link, (now - 3600, now - 3600), follow_symlinks=False)
    write_bundle(tmp_path / "new.bundle", record)
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted([fresh.name, other.name, link.name, folder.name, "new.bundle"])


KILL_SCRIPT = """
import os, signal, sys
from sre_marathon_gym.recording import bundle
record = bundle.load_bundle(sys.argv[1]).record

def write_half_then_die(fh, data):
    fh.write(data[: len(data) // 2])
    fh.flush()
    os.kill(os.getpid(), signal.SIGKILL)

bundle._write_all = write_half_then_die
bundle.write_bundle(sys.argv[2], record)
"""


def test_kill_9_during_a_write_leaves_a_temp_file_that_a_later_write_removes(tmp_path):
    """A writer killed mid-write leaves its temp file; a later write keeps it while it could still be
    a live writer's (younger than STALE_TMP_AGE_S) and removes it after."""
    repo = Path(__file__).resolve().parents[1]
    target = tmp_path / "run.bundle"
    proc = subprocess.run(
        [sys.executable, "-c", KILL_SCRIPT, str(OLD_BUNDLE), str(target)],
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(repo)},
        capture_output=True,
        check=False,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    (leftover,) = tmp_path.glob(".run.bundle.*.tmp")
    assert not target.exists() and bundle_mod._TMP_NAME.fullmatch(leftover.name)
    record = load_bundle(OLD_BUNDLE).record
    write_bundle(tmp_path / "other.bundle", record)
    assert leftover.exists()  # could still be a live writer's
    old = time.time() - bundle_mod.STALE_TMP_AGE_S - 1
    os.utime(leftover, (old, old))
    write_bundle(tmp_path / "other.bundle", record)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.bundle"]


def test_file_system_errors_on_write_are_bundle_errors(run, tmp_path):
    (tmp_path / "run.bundle").mkdir()
    with pytest.raises(BundleWriteError, match="cannot write bundle") as err:
        write_bundle(tmp_path / "run.bundle", run[0])
    assert isinstance(err.value, OSError)


def test_a_store_written_after_a_seal_is_encoded_again():
    """Sealing one store twice at one revision encodes it once (a shared world's agents); a write
    in between, or a new series, makes the next seal read the store again."""
    import copy

    from sre_marathon_gym.recording.bundle import build_bundle_bytes

    record, store, catalog = _short_run(seed=3)
    store = copy.deepcopy(store)  # this test's own, written below
    members = bundle_mod._telemetry_members
    first = members(store)
    assert members(store) is first  # the same revision: not encoded again
    t = store.last_time + store.step_s
    store.record(t, [0], [123.0])
    second = members(store)
    assert second is not first and second[1] != first[1]
    store.series_id("a_new_series_total", {"pod": "x"})
    assert members(store) is not second  # a new series bumps the revision too (it is not written yet)
    assert build_bundle_bytes(record, store, catalog) == build_bundle_bytes(record, store, catalog)
