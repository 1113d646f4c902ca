"""Task texts are the same on every machine: month names do not follow the process locale."""

from __future__ import annotations

import datetime as dt
import locale

import pytest

from sre_marathon_gym.orca.episode import Episode
from sre_marathon_gym.orca.tasks import orca_tasks
from sre_marathon_gym.orca.time_text import MONTHS, current_text, date_text, day_word
from sre_marathon_gym.tools.models import ToolResult


def test_month_names_are_english_whatever_the_locale():
    assert MONTHS[3] == "Apr" and len(MONTHS) == 12
    t = dt.datetime(2026, 4, 20, 17, 19)
    assert current_text(t) == "Apr 20, 2026 at 17:19 ET" and date_text(t) == "Apr 20, 2026"
    old = locale.setlocale(locale.LC_TIME)
    for name in ("de_DE.UTF-8", "fr_FR.UTF-8", "C.UTF-8"):
        try:
            locale.setlocale(locale.LC_TIME, name)
        except locale.Error:
            continue
        try:
            assert current_text(dt.datetime(2026, 3, 5, 9, 0)) == "Mar 05, 2026 at 09:00 ET"
            assert day_word(dt.datetime(2026, 5, 1), dt.datetime(2026, 5, 4)) == "on May 01, 2026"
        finally:
            locale.setlocale(locale.LC_TIME, old)


def test_submit_report_through_call_points_to_what_exists():
    ep = Episode(orca_tasks()[0])
    res = ep.call({"tool": "submit_report", "report": {}})
    assert isinstance(res, ToolResult) and not res.ok
    assert "Episode.submit " not in res.error.message and "Episode.score" in res.error.message
    assert hasattr(Episode, "score")
    with pytest.raises(AttributeError):
        Episode.submit  # noqa: B018  (the method the old text named does not exist)


def test_reported_time_guess_reads_every_report_phrase_of_the_task_set():
    """The no-tool agents' reading of the report time: the clock of "at", the middle of a range, and
    a time inside the named period or day, for every phrase the tasks use."""
    from sre_marathon_gym.orca.tasks import orca_tasks
    from sre_marathon_gym.orca.time_text import period_of, reported_time_guess

    styles = set()
    for t in orca_tasks():
        guess = reported_time_guess(t.reported_styled, t.current_s)
        assert guess is not None, t.reported_styled
        if t.reported_styled.startswith(("at ", "between ")):
            assert abs(guess - t.reported_s) < 60, (t.task_id, t.reported_styled)
        elif "sometime in the" in t.reported_styled:
            assert period_of(guess) == period_of(t.reported_s)
        else:
            assert guess // 86400 == t.reported_s // 86400
        styles.add(t.reported_styled.split()[0])
    assert styles == {"at", "between", "sometime"}
    assert reported_time_guess("around lunch", 10**6) is None
