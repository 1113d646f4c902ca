"""Gymnasium registration of the SRE-Marathon environments (imported by `sre_marathon_gym`)."""

from __future__ import annotations

from gymnasium.envs.registration import register, registry

ENV_IDS = {
    "SREMarathon/OnlineBoutique-v0": "online_boutique",
    "SREMarathon/AstronomyShop-v0": "astronomy_shop",
    "SREMarathon/TrainTicket-v0": "train_ticket",
}


def register_envs() -> None:
    for env_id, app in ENV_IDS.items():
        if env_id not in registry:
            register(id=env_id, entry_point="sre_marathon_gym.envs.marathon:MarathonEnv", kwargs={"app": app},
                     disable_env_checker=False)


register_envs()

ORCA_ENV_IDS = {"SREMarathon/OrcaRCA-v0": "sre_marathon_gym.envs.orca:OrcaRcaEnv"}


def register_orca_envs() -> None:
    for env_id, entry in ORCA_ENV_IDS.items():
        if env_id not in registry:
            register(id=env_id, entry_point=entry, disable_env_checker=False)


register_orca_envs()
