"""SRE-Marathon as an OpenEnv environment, played by a scripted policy in place of an LLM.

    pip install -e '.[openenv]'
    python examples/openenv_scripted.py            # two short train-split episodes, in process

The same environment over OpenEnv's HTTP/WebSocket server, for a trainer in another process:

    uvicorn --factory sre_marathon_gym.llm_rl.openenv_env:marathon_app --port 8000
    # then: GenericEnvClient(base_url="http://127.0.0.1:8000").sync(): reset(seed=...), step({...})
"""

from __future__ import annotations

import tempfile

from sre_marathon_gym.llm_rl import train_rows
from sre_marathon_gym.llm_rl.openenv_env import MarathonToolEnv, ToolCall
from sre_marathon_gym.llm_rl.scripted import alert_grouping_episode
from sre_marathon_gym.recording.rescoring import score_bundle

SHORT = {"intensity": 1.0, "injection_minutes": 10, "observation_minutes": 4}


def main() -> None:
    out = tempfile.mkdtemp(prefix="openenv-")
    env = MarathonToolEnv("online_boutique", out=out, **SHORT)
    for row in train_rows("online_boutique", 2):
        env.reset(seed=row["seed"])
        rewards = alert_grouping_episode(lambda tool, args: env.step(ToolCall(tool=tool, arguments=args)))
        bundle = env.episode.bundle
        card = score_bundle(bundle)[1]
        print(
            f"seed {row['seed']}: {len(rewards)} calls, return {sum(rewards):.1f} = Marathon-Score "
            f"{card.marathon_score_unclipped:.1f} before clipping ({card.marathon_score:.1f} after); {bundle}"
        )


if __name__ == "__main__":
    main()
