"""Sealed bundles: round trip, byte identity, tamper and truncation refusal, atomic writes, HMAC."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import sre_marathon_gym  # noqa: F401  (registers the env ids)
from sre_marathon_gym import bundle as bundle_mod
from sre_marathon_gym.bundle import (
    KEY_ENV,
    BundleError,
    catalog_digest,
    load_bundle,
    score_bundles,
    verify_bundle,
    write_bundle,
)
from sre_marathon_gym.errors import SREMarathonError
from sre_marathon_gym.scoring import score_run


@pytest.fixture(autouse=True)
def _no_env_key(monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)


def _short_run(seed: int = 1, action_seed: int = 7):
    """A 10-minute Online Boutique run driven by a seeded random agent."""
    env = gym.make("SREMarathon/OnlineBoutique-v1", injection_minutes=6, observation_minutes=4, intensity=0.5)
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
    name_len = int.from_bytes(data[h + 26:h + 28], "little")
    extra_len = int.from_bytes(data[h + 28:h + 30], "little")
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
    np.testing.assert_array_equal(store.at(store.select(name), t), rebuilt.at(rebuilt.select(name), t))


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
    assert zf.namelist() == ["manifest.json", "record.json", "scoring.json", "telemetry.json",
                             "telemetry.bin", "seal"]
    for zi in zf.infolist():
        assert zi.date_time == (1980, 1, 1, 0, 0, 0)
        assert zi.external_attr >> 16 == 0o100644
        assert zi.compress_type == zipfile.ZIP_DEFLATED
    manifest = zf.read("manifest.json")
    assert manifest == json.dumps(json.loads(manifest), sort_keys=True, separators=(",", ":"),
                                  ensure_ascii=False).encode()


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


@pytest.mark.parametrize("where", [
    "first_byte", "manifest_local_header_time", "manifest_data", "record_compressed_data",
    "telemetry_compressed_data", "telemetry_compressed_tail", "central_directory_time",
    "central_directory_attrs", "central_directory_name", "seal_data", "end_record", "zip_comment",
    "checksum_hex",
])
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


def _rebuild(src: Path, dst: Path, *, record_edit=None, manifest_edit=None, reseal: bool,
             key: str | None = None):
    """Re-pack a bundle after editing record.json, as a naive editor (reseal=False) or a forger (True)."""
    zf = zipfile.ZipFile(src)
    members = {n: zf.read(n) for n in zf.namelist()}
    if record_edit is not None:
        rec = json.loads(members["record.json"])
        record_edit(rec)
        members["record.json"] = bundle_mod._canonical_json(rec, "record")
    if reseal:
        manifest = json.loads(members["manifest.json"])
        for m in manifest["members"]:
            m["sha256"] = bundle_mod._sha256(members[m["name"]])
            m["size"] = len(members[m["name"]])
        if manifest_edit is not None:
            manifest_edit(manifest)
        members["manifest.json"] = bundle_mod._canonical_json(manifest, "manifest")
        members["seal"] = bundle_mod._seal_bytes(members["manifest.json"], bundle_mod._resolve_key(key))
    dst.write_bytes(bundle_mod._zip_bytes(list(members.items())))
    return dst


def _drop_faults(rec: dict) -> None:
    rec["faults"], rec["probes"], rec["artifact_fixed"] = [], [], {}


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
    downgraded = _rebuild(keyed, tmp_path / "forged3.bundle", record_edit=_drop_faults, reseal=True,
                          manifest_edit=lambda m: m.update(seal="sha256"))
    with pytest.raises(BundleError, match="plain sha256 seal"):
        load_bundle(downgraded, key="maintainer-secret")


def test_unsupported_format_version(run, tmp_path):
    plain = write_bundle(tmp_path / "plain.bundle", run[0])
    future = _rebuild(plain, tmp_path / "v2.bundle", reseal=True,
                      manifest_edit=lambda m: m.update(format_version=2))
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


# ------------------------------------------------------------------------------------------ catalog digest
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


def test_new_bundles_seal_rules_v2(run, sealed):
    record, _, catalog = run
    b = load_bundle(sealed)
    assert b.scoring is not None and b.scoring.rules_version == 2 and b.scoring.penalties is not None
    (card,) = score_bundles([sealed])
    assert card == score_run(record, catalog.scoring) and card.rules_version == 2
    (v1,) = score_bundles([sealed], rules=1)
    assert v1.rules_version == 1 and v1 == score_run(record, catalog.scoring.with_rules(1))
