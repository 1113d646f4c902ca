"""MarathonEnv: the SRE-Marathon protocol as a Gymnasium environment (one step = one invocation)."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.envs.registration import EnvSpec

from ..backends.sim_run import SimulatedRun
from ..catalog import Catalog, load_catalog
from ..core.clock import METRIC_STEP_S, TICK_S
from ..core.errors import ConfigurationError
from ..schedule.fault_schedule import FaultSchedule
from ..scoring import MarathonReward
from ..tools.models import ToolResult
from ..tools.runner import ToolRunner
from .actions import baseline_values
from .core import MarathonCore
from .inputs import (
    MAX_RUN_MINUTES,
    InvalidAction,
    check_reset_arguments,
    frozen_copy,
    real,
    slot_array,
    whole,
)
from .recorder import RunRecorder
from .shared_world import SharedWorld, advance_world


class MarathonEnv(MarathonCore):
    """
    ## Description
    An agent operates a microservice app (Online Boutique, Astronomy Shop or Train Ticket) on the
    embedded cluster simulator while a seeded orchestrator injects overlapping faults: 60 minutes
    of injections at increasing intensity, then 30 minutes of observation. The agent is invoked
    every `interval_s` simulated seconds with the cumulative alert history; it reports incidents
    (alerts it groups, the root cause it names) and intervenes (rollback, restart, scale, config,
    source patch, cluster operations). Ground truth never appears in observations or `info`, and
    neither does the running score (its changes would tell which incidents matched a hidden fault).

    ## Action Space
    `MultiDiscrete` of shape ``(action_slots, 5)``; each slot is one tool call
    ``(verb, service, artifact, incident, value)``:

    - ``verb`` (12): `envs.actions.VERBS`: 0 noop, 1 open_incident, 2 set_root_cause,
      3 resolve_incident, 4 rollback, 5 restart, 6 scale, 7 set_config, 8 patch_source,
      9 failover, 10 uncordon, 11 delete_network_policy;
    - ``service`` (services: 11 / 21 / 50 for Online Boutique / Astronomy Shop / Train Ticket):
      `env.unwrapped.layout.services[i]`;
    - ``artifact`` (41 / 47 / 136): `layout.artifact(service, i)`: the service's Deployment and
      its fields, config keys, source files and deny policies, then the node and zone artifacts;
    - ``incident`` (`max_incidents`, 16): the i-th open incident, oldest first;
    - ``value`` (8): scale to `SCALE_CHOICES[i]`; failover to zone i; uncordon node i; delete
      network policy i.

    `info["action_mask"]` holds per-dimension masks for one slot (the same for every slot);
    `info["services_with_ungrouped_alerts"]` (bool per service) says where `open_incident` has
    firing alerts to group, which a factorised mask cannot express. The encodings in `wrappers`
    are what RL libraries train: `MacroActions` (moves on recent changes, a joint mask,
    ``action_masks()``), `EncodeActionSlots`, `FlattenActions`; `wrappers.for_sb3` for
    Stable-Baselines3. LLM agents use `env.unwrapped.call_tool(call)` within an invocation
    instead, then `step(None)` (or a noop action) to end it.

    ## Observation Space
    `Dict` (``A = max_alerts``, ``S`` services in `layout.services` order, ``I = max_incidents``):

    | key                 | shape, dtype       | meaning                                                  |
    |---------------------|--------------------|----------------------------------------------------------|
    | `alert_rule`        | (A,) int           | 0 empty, else 1 + its rule's index (`rule_index`)     |
    | `alert_service`     | (A,) int           | 0 none, else 1 + the first service its labels name       |
    | `alert_state`       | (A,) int           | 0 empty, 1 firing, 2 resolved                            |
    | `alert_age_min`     | (A,) float32       | minutes since it fired                                   |
    | `alert_in_incident` | (A,) 0/1           | an open incident holds it                                |
    | `services`          | (S, 8) float32     | last interval, `envs.observation.SERVICE_FEATURES`      |
    | `incidents`         | (I, 5) float32     | open, alerts held, has a root cause, age (min), resolved |
    | `time`              | (2,) float32       | share of the run elapsed, injections over (0/1)          |

    `services` columns: requests/s, error ratio, log10(1 + mean latency in ms), CPU-throttled
    share, ready ratio, restarts, pods not running, changes submitted. The alerts are the latest
    ``A`` of the history, oldest first; the incidents the latest ``I`` the agent opened.
    `wrappers.ChangeObservation` adds each service's recent changes and what its telemetry did
    after each (from tool outputs only; see its docstring for the fields).

    ## Rewards
    Increments of the Marathon-Score (correlation, localization, repair per fault, all faults in
    the denominator) minus its penalties (rules v2: false incidents, false claims, needless
    interventions; both rule sets: forbidden operations), so that an episode's return equals its
    Marathon-Score before clipping. Rewards can be negative. The reward is computed from the hidden
    ground truth, so it carries information about it: a policy that feeds its past rewards back
    into its input (a recurrent policy given the last reward, an LLM shown its return) can learn
    which of its incidents matched a fault from it, not from telemetry. Train with it; evaluate
    without it (`agents.base.run_episode` passes an evaluated agent neither reward nor score).

    ## Episode End
    Terminates when the run (injection plus observation) is over, after exactly `episode_steps`
    steps: `reset` advances one `interval_s` and each `step` one more (the last clamped to the
    run's end), so ``episode_steps = ceil(run_s / interval_s) - 1`` (44 for the leaderboard
    protocol, 90 min at 120 s). Every `info` carries it as ``info["episode_steps"]``. Never
    truncates by itself.

    ``gym.make(id, **kwargs).spec.max_episode_steps`` is `episode_steps` for those kwargs: the
    length depends on `mode`, `injection_minutes`, `observation_minutes` and `interval_s`, so the
    registered spec says None (``gym.spec(id)``, and a vector env's own spec, show None) and the env
    fills its length into the spec `gym.make` gives it. `gym.make` therefore adds no `TimeLimit`
    and truncated stays False to the end. A limit you ask for, ``gym.make(id, max_episode_steps=n)``,
    truncates at step ``n`` if ``n < episode_steps``; otherwise the episode ends by termination as
    usual, and when ``n == episode_steps`` (as for ``gym.make(env.spec)``, which re-applies the
    spec's limit) `TimeLimit` also reports that last step truncated: terminated is what counts.

    ## Arguments
    `app` (online_boutique | astronomy_shop | train_ticket), `mode` ("train" | "eval"; eval fixes
    the leaderboard seed, 60+30 min and 120 s), `intensity` (fault-rate multiplier, train only),
    `injection_minutes`, `observation_minutes`, `interval_s`, `action_slots`, `max_alerts`,
    `max_incidents`, `catalog` (a `Catalog` or a directory), `prometheus_url` (metric reads and
    the metrics tool's ``promql`` go to this Prometheus instead of the simulator's store: a live
    cluster's, or one serving this seed's run from `sre-marathon export-prometheus --serve`) and
    `prometheus_origin_s` (its timestamp of simulated t=0), `rules` (the Marathon-Score rule set the
    reward follows; default: the catalog's, rules v2).

    `changes` ("production" | "curated") picks the benign change stream and
    `change_failure_rate` (train only) its mix (`sre_marathon_gym.schedule.change_stream`).

    ## Version History
    - v3: the production change stream: harmless twins of the faulty changes on every plane the
      agent reads, at the change failure rate of DORA 2019 (15%); v2 keeps the curated commits.
    - v2: rewards follow Marathon-Score rules v3 (no score before the end, claims judged when made,
      no late matches, specific evidence, interventions only on the culprit).
    - v1: rewards follow Marathon-Score rules v2 (one-to-one incident matching, penalties for false
      incidents, false claims and needless interventions); an agent's artifact fix no longer counts
      for a change still in the pipeline.
    - v0: initial release (rules v1; still registered, with ``rules=1``).
    """

    def __init__(
        self,
        app: str = "online_boutique",
        mode: str = "train",
        intensity: float = 1.0,
        injection_minutes: int | None = None,
        observation_minutes: int | None = None,
        interval_s: int | None = None,
        action_slots: int = 4,
        max_alerts: int = 64,
        max_incidents: int = 16,
        catalog: Catalog | str | None = None,
        prometheus_url: str | None = None,
        prometheus_origin_s: int | None = None,
        rules: int | None = None,
        changes: str = "production",
        change_failure_rate: float | None = None,
    ):
        self.catalog = catalog if isinstance(catalog, Catalog) else load_catalog(catalog)
        self.app = self.catalog.app(app)
        lb = self.catalog.leaderboard
        if mode not in ("train", "eval"):
            raise ConfigurationError(f"mode must be 'train' or 'eval', got {mode!r}")
        if (
            mode == "eval"
            and any(v is not None for v in (injection_minutes, observation_minutes, interval_s))
            or (mode == "eval" and intensity != 1.0)
        ):
            raise ConfigurationError(
                "mode='eval' fixes the leaderboard protocol; use mode='train' to change "
                "intensity, duration or cadence"
            )
        intensity = real("intensity", intensity, 0.0, 4.0, lo_open=True)
        from ..schedule.change_stream import CHANGE_STREAMS

        if changes not in CHANGE_STREAMS:
            raise ConfigurationError(f"changes must be one of {list(CHANGE_STREAMS)}, got {changes!r}")
        if change_failure_rate is not None:
            if mode == "eval" or changes != "production":
                raise ConfigurationError(
                    "change_failure_rate applies to changes='production' in mode='train' (eval fixes it)"
                )
            change_failure_rate = real("change_failure_rate", change_failure_rate, 0.0, 1.0, lo_open=True)
        self.changes, self.change_failure_rate = changes, change_failure_rate
        if rules is not None:
            rules = whole("rules", rules, 0, 2**31)  # the type here; which versions exist: with_rules
        try:
            self.scoring = (
                self.catalog.scoring
                if rules is None
                else self.catalog.scoring.with_rules(rules, defaults=load_catalog().scoring)
            )
        except ValueError as exc:
            raise ConfigurationError(f"rules: {exc}") from exc
        self.mode = mode
        self.intensity = intensity
        self.injection_s = 60 * (
            lb.injection_minutes
            if injection_minutes is None
            else whole("injection_minutes", injection_minutes, 1, MAX_RUN_MINUTES)
        )
        self.observation_s = 60 * (
            lb.observation_minutes
            if observation_minutes is None
            else whole("observation_minutes", observation_minutes, 0, MAX_RUN_MINUTES)
        )
        self.interval_s = (
            lb.interval_s if interval_s is None else whole("interval_s", interval_s, 1, 60 * MAX_RUN_MINUTES)
        )
        if self.interval_s < METRIC_STEP_S or self.interval_s % TICK_S:
            raise ConfigurationError(f"interval_s must be a multiple of {TICK_S:g} >= {METRIC_STEP_S}")
        if self.injection_s + self.observation_s <= self.interval_s:
            raise ConfigurationError(
                f"the run ({self.injection_s + self.observation_s} s of injection and observation) must "
                f"be longer than one invocation interval ({self.interval_s} s): the agent is first "
                "invoked one interval in"
            )
        self.run_s = self.injection_s + self.observation_s
        self._init_spaces(max_alerts, max_incidents, action_slots)
        self.run: SimulatedRun | None = None
        self._world: SharedWorld | None = None  # see `share_world`
        self._actions_seen = 0
        self._init_kwargs = dict(
            app=app,
            mode=mode,
            intensity=intensity,
            injection_minutes=injection_minutes,
            observation_minutes=observation_minutes,
            interval_s=interval_s,
            action_slots=action_slots,
            max_alerts=max_alerts,
            max_incidents=max_incidents,
            prometheus_url=prometheus_url,
            prometheus_origin_s=prometheus_origin_s,
            rules=rules,
            changes=changes,
            change_failure_rate=change_failure_rate,
        )
        self.metrics_source = None
        if prometheus_url is not None:
            from ..core.clock import MAX_ORIGIN_S
            from ..prometheus import DEFAULT_ORIGIN_S, PrometheusMetrics

            origin = (
                DEFAULT_ORIGIN_S
                if prometheus_origin_s is None
                else whole("prometheus_origin_s", prometheus_origin_s, 0, MAX_ORIGIN_S)
            )
            self.metrics_source = PrometheusMetrics(prometheus_url, origin_s=origin)
        self._journal: list[tuple[str, Any]] = []  # what happened since reset, to rebuild by replay
        self.baseline_values = baseline_values(self.app)
        from ..recording.bundle import catalog_digest

        self.catalog_version = catalog_digest(self.catalog)

    # ------------------------------------------------------------ episode length
    @property
    def episode_steps(self) -> int:
        """The number of `step` calls in an episode (see "Episode End"), known before running."""
        return -(-self.run_s // self.interval_s) - 1

    _spec: EnvSpec | None = None

    @property
    def spec(self) -> EnvSpec | None:  # type: ignore[override]
        """The spec `gym.make` set, with ``max_episode_steps`` filled in from `episode_steps` (a
        registered id cannot know it: it depends on the kwargs)."""
        spec = self._spec
        if spec is None or spec.max_episode_steps is not None:
            return spec
        return dataclasses.replace(spec, max_episode_steps=self.episode_steps)

    @spec.setter
    def spec(self, value: EnvSpec | None) -> None:
        self._spec = value

    # ------------------------------------------------------------ gymnasium API
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        check_reset_arguments(seed, options)
        super().reset(seed=seed)
        if self.mode == "eval":
            lb_seed = self.catalog.leaderboard.seed_for(self.app.app)
            if seed is not None and seed != lb_seed:
                raise ConfigurationError(f"mode='eval' runs the leaderboard seed {lb_seed}; got seed={seed}")
            seed = lb_seed
        if seed is None:
            seed = int(self.np_random.integers(0, 2**31 - 1))
        self.seed_used = seed
        self._journal = []
        if self._world is not None and self._world.parts is not None and self.run is not None:
            self._leave_world()  # a shared world serves one episode: the next one is this env's own
        if self._world is not None:
            try:
                self.schedule, self.run, self.alert_engine = self._world.parts_for(
                    self._world_key(seed), lambda: self._build_world(seed)
                )
            except BaseException:
                self._leave_world()  # the others must not wait for an env that will not come
                raise
        else:
            self.schedule, self.run, self.alert_engine = self._build_world(seed)
        self.backend = self.run.backend
        self.runner = ToolRunner(self.backend, self.alert_engine, metrics=self.metrics_source)
        if self._world is not None:
            self.runner.before_change = self._own_world
        self.recorder = RunRecorder(self)
        self._actions_seen = 0
        self.reward_fn = MarathonReward(self.scoring)
        self._restarts_at_step = self.run.restart_counts()
        self._advance(self.interval_s)
        return self._observe(), self._info()

    def step(self, action: Any):
        if self.run is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        if self.run.now >= self.run_s:
            raise gym.error.ResetNeeded("the episode is over; call reset()")
        arr, problem = slot_array(action, self.action_space)
        # a refused action replays as refused, with its reason (a rebuilt env records the same result)
        self._journal.append(("step", arr if problem is None else InvalidAction(problem)))
        results = [ToolResult.fail("action", "invalid_arguments", problem)] if problem is not None else []
        results += self._run_slots(arr)
        self.runner.invocation += 1
        self.recorder.after_invocation(self.run, acted=self._acted_since_last_step())
        self._restarts_at_step = self.run.restart_counts()
        self._advance(min(self.run.now + self.interval_s, self.run_s))
        terminated = self.run.now >= self.run_s
        reward = self.reward_fn.step(self.recorder.record(full=False), self.run.now)
        info = self._info()
        info["tool_results"] = [r.model_dump() for r in results]
        return self._observe(), float(reward), terminated, False, info

    @property
    def sim(self) -> Any:
        """The embedded simulator of the current episode (tests and benchmarks; agents use tools)."""
        return self.run.sim if self.run is not None else None

    @property
    def metric_store(self) -> Any:
        """Every series the episode sampled (what a bundle stores); None before `reset`."""
        return self.run.metric_store if self.run is not None else None

    @property
    def now(self) -> float:
        """Simulated seconds since the episode started (0 before `reset`)."""
        return self.run.now if self.run is not None else 0.0

    def interval_traffic(self) -> tuple[float, float]:
        """(entry-point requests, degraded requests) over the last interval."""
        return self.run.interval_traffic()

    def record(self):
        """The run so far as a `RunRecord` (ground truth included: for scoring and bundles, not for
        agents)."""
        if self.run is None:
            raise gym.error.ResetNeeded("no run yet: call reset() before record()")
        return self.recorder.record()

    def config(self) -> dict:
        return {
            "app": self.app.app,
            "mode": self.mode,
            "intensity": self.intensity,
            "injection_s": self.injection_s,
            "observation_s": self.observation_s,
            "interval_s": self.interval_s,
            "action_slots": self.action_slots,
            "max_alerts": self.max_alerts,
            "max_incidents": self.max_incidents,
            "rules": self.scoring.rules_version,
            "changes": self.changes,
            "change_failure_rate": self.schedule_change_failure_rate(),
        }

    def schedule_change_failure_rate(self) -> float | None:
        """The change failure rate the schedule is drawn at (None for the curated stream)."""
        if self.changes != "production":
            return None
        from ..schedule.change_stream import CHANGE_FAILURE_RATE

        return CHANGE_FAILURE_RATE if self.change_failure_rate is None else self.change_failure_rate

    def _acted_since_last_step(self) -> bool:
        n = len(self.runner.actions)
        acted = any(a.kind == "intervention" and a.ok for a in self.runner.actions[self._actions_seen :])
        self._actions_seen = n
        return acted

    def call_tool(self, call: Any) -> ToolResult:
        """Interactive mode: run one tool call now (within the current invocation).

        Before `reset` and after the episode's end the call is refused and not recorded (the record
        of a finished run cannot change). The journal that rebuilds a pickled env keeps a copy made
        now, so a caller mutating its dict afterwards changes nothing."""
        tool = call.get("tool") if isinstance(call, dict) else None
        tool = tool if isinstance(tool, str) else "?"
        if self.run is None:
            return ToolResult.fail(tool[:100], "unavailable", "call reset() before using tools")
        if self.run.now >= self.run_s:
            return ToolResult.fail(tool[:100], "unavailable", "the episode is over; call reset()")
        self._journal.append(("tool", frozen_copy(call)))
        return self.runner.call(call)

    # ------------------------------------------------------------ pickling: rebuild by deterministic replay
    def __getstate__(self) -> dict:
        spec = self._spec
        if spec is not None and isinstance(spec.kwargs.get("catalog"), Catalog):  # its root, not the object
            spec = dataclasses.replace(spec, kwargs={**spec.kwargs, "catalog": str(self.catalog.root)})
        return {
            "kwargs": self._init_kwargs,
            "catalog_root": str(self.catalog.root),
            "seed": getattr(self, "seed_used", None) if self.run is not None else None,
            "journal": list(self._journal),
            "spec": spec,
        }

    def __setstate__(self, state: dict) -> None:
        self.__init__(catalog=load_catalog(state["catalog_root"]), **state["kwargs"])  # type: ignore[misc]
        self._spec = state.get("spec")
        if state["seed"] is None:
            return
        self.reset(seed=state["seed"])
        for kind, payload in state["journal"]:
            if kind == "step":
                self.step(payload)
            else:
                self.call_tool(payload)

    # ------------------------------------------------------------ internals
    def _advance(self, t: float) -> None:
        """Advance on the metric grid (probe samples for scoring), then evaluate alerts up to now
        (on a shared world: once every env on it asks for `t`)."""
        if self._world is not None:
            self._world.advance(self, t)
        else:
            advance_world(self.run, self.alert_engine, (self.recorder,), t)

    # ------------------------------------------------------------ a world shared by several envs
    def share_world(self, world: SharedWorld) -> None:
        """Read `world` (`envs.shared_world`) with the other envs attached to it, until this env's
        first intervention (then it continues on a copy). Attach every env before any of them
        resets; each runs the same episode (seed, protocol, catalog), its agent in its own thread
        (`shared_world.run_together`). Observations, tool results and scores are those of a run
        alone; the simulation is done once for all."""
        if self.metrics_source is not None:
            raise ConfigurationError("an env that reads Prometheus cannot share a simulated world")
        if self.run is not None:
            raise ConfigurationError("share_world comes before the env's first reset")
        world.attach(self)
        self._world = world

    def _world_key(self, seed: int) -> tuple:
        """What envs on one shared world must agree on: everything the schedule, the simulation and
        the alert rules depend on."""
        return (
            id(self.catalog), self.app.app, seed, self.mode, self.intensity, self.injection_s,
            self.observation_s, self.interval_s, self.changes, self.change_failure_rate,
        )  # fmt: skip

    def _build_world(self, seed: int) -> tuple:
        """(schedule, simulated run, alert engine) of the episode of `seed`."""
        from ..alerting.engine import AlertEngine

        schedule = FaultSchedule.generate(
            self.catalog,
            self.app.app,
            seed,
            injection_minutes=self.injection_s // 60,
            observation_minutes=self.observation_s // 60,
            intensity=self.intensity,
            changes=self.changes,
            change_failure_rate=self.change_failure_rate,
        )
        run = SimulatedRun(self.catalog, self.app.app, seed, schedule)
        return schedule, run, AlertEngine(self.catalog.rules, self.app, run.metric_store)

    def _own_world(self) -> None:
        """Leave the shared world for a copy of it, as it is now: this env is about to change it."""
        if self._world is None:
            return
        # read-only (the compiled app's arrays refuse writes): not copied
        shared = {id(o): o for o in (self.catalog, self.app, self.run.sim.compiled)}
        self.run, self.alert_engine = copy.deepcopy((self.run, self.alert_engine), shared)
        self.backend = self.run.backend
        self.runner.rebind(self.backend, self.alert_engine)
        self._leave_world()

    def _leave_world(self) -> None:
        world, self._world = self._world, None
        if getattr(self, "runner", None) is not None:
            self.runner.before_change = None
        world.leave(self)

    def close(self) -> None:
        if self._world is not None:
            self._leave_world()
        super().close()

    def _extra_info(self) -> dict:
        # Only here, not in `MarathonCore._info`: the live env skips the invocations an overrunning
        # agent missed, so its number of steps is not known before the episode runs.
        return {"episode_steps": self.episode_steps}

    def _service_features(self) -> np.ndarray:
        return self.run.service_features(self.interval_s, self._restarts_at_step)
