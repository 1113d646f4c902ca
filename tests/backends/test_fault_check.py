"""Every catalog fault, injected alone, shows its symptom, recovers after revert and is repairable."""

from __future__ import annotations

import pytest

from sre_marathon_gym.backends.fault_check import validate_catalog


@pytest.mark.slow
def test_every_fault_passes_the_validation_harness(catalog):
    checks = validate_catalog(catalog, progress=False)
    assert len(checks) == 700
    failed = [
        (c.fault_id, c.fails, c.entry_serves, c.recovers, c.repaired_by, c.note)
        for c in checks
        if not c.passed
    ]
    assert not failed, failed[:10]
    # symptomless by design (wrong answers, no errors): only the artifact-correction path applies
    assert [c.fault_id for c in checks if not c.observable] == [
        f.id for f in catalog.all_faults() if not f.observable
    ]
    assert sum(not c.observable for c in checks) <= 2
