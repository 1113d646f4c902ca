"""Ground truth from the complaint's route and symptom (not its area, not the simulator), complaint
texts that never name a flag, the mean-causes targets, and the no-tool area prior."""

from __future__ import annotations

import re

import pytest
import yaml

from sre_marathon_gym.agents.orca_baselines import (
    AreaPriorAgent,
    TaskView,
    complaint_area,
    issue_question,
    prior_half,
)
from sre_marathon_gym.catalog.locate import catalog_dir
from sre_marathon_gym.core.errors import CatalogError
from sre_marathon_gym.evaluation.orca import evaluate
from sre_marathon_gym.orca.data import (
    Complaint,
    QuestionsFile,
    load_answers,
    load_frontend,
    load_leaderboard,
    load_questions,
)
from sre_marathon_gym.orca.episode import Episode
from sre_marathon_gym.orca.schedule import orca_schedule
from sre_marathon_gym.orca.tasks import (
    Question,
    check_answers,
    complaint_routes,
    orca_tasks,
    plausible,
    questions,
    task_key,
)
from sre_marathon_gym.scoring.orca import published_metrics

DAY2 = (86_400, 2 * 86_400)
IMAGES = "GET /images/products/<picture>"


def _flags_of(causes) -> list[str]:
    return [c.flag for c in causes]


def _ask(event_id: str, complaint: Complaint, areas: tuple[str, ...] = ("checkout",)):
    sched = orca_schedule()
    event = next(e for e in sched.events if e.id == event_id)
    q = Question(f"{event_id}-00-easy", event, "easy", complaint, areas)
    return plausible(sched, load_questions(), q, *DAY2)


# ---------------------------------------------------------------- the rule, by hand on day 2
# Day 2 (reference/orca/schedule.md): adHighCpu, adManualGc, adFailure, then productCatalogFailure,
# paymentFailure 10% and 50%, cartFailure.


def test_a_quoted_string_adds_its_flag_and_others_only_by_route_and_symptom():
    c = Complaint(
        text="Place Order fails with 'Payment request failed. Invalid token.'",
        routes=("POST /api/checkout",),
        symptom="error",
        quotes="paymentFailure",
    )
    gt = _ask("d2-d1dep-paymentFailure-10%", c)
    # the authored event first; productCatalogFailure also 500s POST /api/checkout; cartFailure's
    # 504 hang is not an "error" a user reports as an immediate 500; the ad flags touch another route
    assert _flags_of(gt) == ["paymentFailure", "productCatalogFailure", "paymentFailure"]
    hang = Complaint(text="Place Order hangs, then times out", routes=("POST /api/checkout",), symptom="hang")
    assert _flags_of(_ask("d2-d1dep-cartFailure-on", hang)) == ["cartFailure"]


def test_a_quote_makes_its_flag_plausible_even_where_route_and_symptom_do_not():
    text = "The ad box is empty; GET /api/data returned HTTP 500."
    quoted = Complaint(text=text, routes=("GET /api/data",), symptom="error", quotes="adFailure")
    assert _flags_of(_ask("d2-cc1-adFailure-on", quoted, ("ads",))) == ["adFailure"]  # not adManualGc (slow)
    assert _ask("d2-cc1-adFailure-on", Complaint(text=text, routes=("GET /api/data",), symptom="error")) == ()
    blank = Complaint(text="The ad banner is blank", routes=("GET /api/data",), symptom="missing")
    # a blank banner may be a failed fetch or a late one; adHighCpu has no frontend symptom: never
    assert _flags_of(_ask("d2-cc1-adFailure-on", blank, ("ads",))) == ["adFailure", "adManualGc"]


def test_the_universal_complaint_takes_every_frontend_flag_of_the_day():
    sched = orca_schedule()
    event = next(e for e in sched.events if e.id == "d2-cc1-adHighCpu-on")
    q = Question("x", event, "universal", Complaint(text=load_questions().universal, symptom="any"), ())
    gt = plausible(sched, load_questions(), q, *DAY2)
    assert sorted(_flags_of(gt)) == sorted(
        [
            "adManualGc",
            "adFailure",
            "productCatalogFailure",
            "paymentFailure",
            "paymentFailure",
            "cartFailure",
        ]
    )


def test_every_task_follows_the_rule():
    """Each cause is quoted or matches route + symptom; image slowness never answers a complaint
    about another route (the old rule: the simulator slowed every request type, so checkout
    failures had imageSlowLoad as their only answer)."""
    qf, fe, answers = load_questions(), load_frontend(), load_answers()
    by_text = {c.text: c for spec in qf.flags.values() for cs in spec.easy.values() for c in cs}
    by_text |= {c.text: c for spec in qf.areas.values() for c in spec.medium}
    checked = 0
    for t in orca_tasks():
        if t.is_control or not t.areas:
            continue
        c = by_text[t.question]
        routes = complaint_routes(qf, c, t.areas)
        for cause in t.ground_truth:
            assert cause.flag not in answers.no_frontend
            kinds = fe.symptom_kinds[c.symptom]
            ok = [i for i in fe.flags[cause.flag] if i.route in routes and i.symptom_type in kinds]
            assert c.quotes == cause.flag or ok, (t.task_id, cause.flag)
        if IMAGES not in routes:
            assert "imageSlowLoad" not in _flags_of(t.ground_truth), t.task_id
        checked += 1
    assert checked > 500


def _raw_questions() -> dict:
    return yaml.safe_load((catalog_dir() / "orca" / "questions.yaml").read_text())


def test_catalog_checks_catch_typos_and_complaints_their_own_flag_cannot_cause():
    check_answers(load_answers(), load_questions(), load_frontend())  # the shipped catalog is consistent
    raw = _raw_questions()
    raw["flags"]["cartFailure"]["easy"]["cart"][0]["symptom"] = "error"  # a 504 hang is not a 500
    with pytest.raises(CatalogError, match="not plausible for its own flag"):
        check_answers(load_answers(), QuestionsFile.model_validate(raw), load_frontend())
    raw = _raw_questions()
    raw["areas"]["ads"]["routes"] = ["GET /api/ads"]
    with pytest.raises(CatalogError, match="unknown route"):
        check_answers(load_answers(), QuestionsFile.model_validate(raw), load_frontend())


# ---------------------------------------------------------------- texts
def names_a_flag(text: str, flags) -> str | None:
    """The flag (or catalog wording) a text gives away: "feature flag", a flag's name, or two or more
    consecutive camel-case parts of one ("product catalog", "manual gc")."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    joined = f" {' '.join(words)} "
    if {"flag", "flags", "flagd", "featureflag"} & set(words):
        return "flag"
    for flag in flags:
        parts = [p.lower() for p in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", flag)]
        if flag.lower() in words:
            return flag
        for i in range(len(parts) - 1):
            for j in range(i + 2, len(parts) + 1):
                if f" {' '.join(parts[i:j])} " in joined:
                    return flag
    return None


def test_the_scanner_catches_the_old_catalog_wording():
    flags = list(load_questions().flags)
    assert names_a_flag("fails with 'Product Catalog Fail Feature Flag Enabled'", flags) == "flag"
    assert names_a_flag("the product catalog is down", flags) == "productCatalogFailure"
    assert names_a_flag("a manual GC pause", flags) == "adManualGc"
    assert names_a_flag("AdFailure everywhere", flags) == "adFailure"
    assert names_a_flag("shoppers cannot use their cart", flags) is None


def test_no_task_text_names_a_flag():
    qf = load_questions()
    texts = {qf.universal, *(c.text for a in qf.areas.values() for c in a.medium)}
    texts |= {c.text for f in qf.flags.values() for cs in f.easy.values() for c in cs}
    texts |= {t.question for t in orca_tasks()}
    bad = {t: names_a_flag(t, qf.flags) for t in texts if names_a_flag(t, qf.flags)}
    assert not bad, bad


def test_texts_are_varied_and_medium_ones_follow_the_reference_form():
    tasks = orca_tasks()
    distinct = {d: {t.question for t in tasks if t.difficulty == d} for d in ("easy", "medium", "hard")}
    assert len(distinct["medium"]) >= 15 and len(distinct["hard"]) == 1
    # the reference wrote one easy complaint per event: no two events share one
    easy = [q for q in questions(orca_schedule(), load_questions()) if q.granularity == "easy"]
    assert len({q.text for q in easy}) == len(easy) == 42
    assert len(distinct["easy"]) >= 35
    qf = load_questions()
    for area, spec in qf.areas.items():
        assert len(spec.medium) >= 3, area
        for c in spec.medium:  # tasks.md: <= 7 words, a user subject first
            assert len(c.text.split()) <= 7 and c.text.split()[0] in {"users", "shoppers", "customers"}, (
                c.text
            )
    # later events of a flag take another phrasing when one exists (tasks.md: "vary the phrasing")
    asked = questions(orca_schedule(), qf)
    for flag, spec in qf.flags.items():
        for area, options in spec.easy.items():
            mine = [
                q for q in asked if q.granularity == "easy" and q.event.flag == flag and q.areas == (area,)
            ]
            assert len({q.text for q in mine}) == min(len(mine), len(options)), (flag, area)


# ---------------------------------------------------------------- targets
def _mean_causes(difficulty: str) -> float:
    inc = [t for t in orca_tasks() if t.difficulty == difficulty and not t.is_control]
    return sum(len(t.ground_truth) for t in inc) / len(inc)


def test_mean_causes_easy_matches_the_reference():
    assert abs(_mean_causes("easy") - 2.00) <= 0.15  # the paper: 2.00 plausible causes per easy task
    assert _mean_causes("hard") > _mean_causes("medium") > 1.5


@pytest.mark.xfail(
    strict=True,
    reason="hard tasks take every frontend-visible event of the report day (the reference's universal "
    "rule); with the published task shape the pool's mean is 4.19 and the kept 285 give 4.17",
)
def test_mean_causes_hard_matches_the_reference():
    assert abs(_mean_causes("hard") - 4.41) <= 0.15


# ---------------------------------------------------------------- the area prior
def test_area_prior_halves_are_a_fixed_split_and_it_reads_only_the_other_half():
    tasks = orca_tasks()
    halves = [prior_half(t.event_id) for t in tasks]
    assert 0.3 < sum(halves) / len(tasks) < 0.7
    agent = AreaPriorAgent(tasks)
    # by incident: no event has tasks in both halves, so no sibling task leaks its answer
    by_event: dict[str, set[int]] = {}
    for t in tasks:
        by_event.setdefault(t.event_id, set()).add(agent.halves[task_key(t)])
    assert all(len(h) == 1 for h in by_event.values()) and len(by_event) > 30
    # refit with the answered half's ground truth removed: answers do not change
    for h in (0, 1):
        only = AreaPriorAgent([t for t in tasks if prior_half(t.event_id) != h])
        assert only.fits[1 - h] == agent.fits[1 - h]
    # a task of another world (a fresh one) gets the fit on every task it was built on
    assert agent.answer("not-a-task-key", tasks[0].question) == agent.whole.get(
        complaint_area(tasks[0].question), ()
    )
    qf = load_questions()
    assert complaint_area(qf.universal) == ("hard", "")
    assert complaint_area(qf.areas["ads"].medium[0].text) == ("medium", "ads")
    assert agent.answer(task_key(tasks[0]), "a complaint no catalog holds") == ()


def test_area_prior_calls_no_tool_and_reads_the_complaint_from_the_instruction():
    tasks = [t for t in orca_tasks() if not t.is_control][::40]
    agent = AreaPriorAgent()

    def no_tool(raw):
        raise AssertionError(f"the area prior called a tool: {raw}")

    for t in tasks:
        ep = Episode(t)
        assert issue_question(ep.issue) == t.question
        view = TaskView(task_key(t), ep.issue, t.current_s, t.horizon_s)
        report = agent.investigate(view, no_tool)
        assert [rc.flag for rc in report.root_causes] == list(agent.answer(task_key(t), t.question))


def test_area_prior_health_row_is_the_judge_of_its_fit():
    """The row `orca evaluate` prints: every task answered by the fit on the other half and judged;
    accuracy is exactly "the fitted set is the ground-truth set, each dated inside its cause's window",
    and naming flags fails controls."""
    tasks = orca_tasks()
    scores = {s.task_id: s for s in evaluate("area_prior")}
    assert len(scores) == 1079
    agent = AreaPriorAgent(tasks)
    hits = 0
    for t in tasks:
        named = set(agent.answer(task_key(t), t.question))
        s = scores[t.task_id]
        if t.is_control:
            assert s.control_pass == (not named)
        else:
            exact = named == {c.flag for c in t.ground_truth}
            assert s.rca_accuracy == int(exact and not s.wrong_claims)
            if exact:  # the right set can only fail on a cause dated outside its window
                assert all(" at t=" in w for w in s.wrong_claims)
            hits += s.rca_accuracy
    assert 0 < hits < 884


def test_area_prior_does_not_beat_the_best_published_model():
    """Sound accuracy: the right flag set, each dated inside its cause's window. (Under the published
    definitions, which ignore wrong claims and times, it does beat them: `orca evaluate` prints both.)"""
    m = published_metrics(evaluate("area_prior"), sound=True)
    rows = load_leaderboard().rows
    assert m["rca_accuracy_incident_medium"].mean <= max(r.rca_accuracy_medium for r in rows)
    assert m["rca_accuracy_incident_hard"].mean <= max(r.rca_accuracy_hard for r in rows)
