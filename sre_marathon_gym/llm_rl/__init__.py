"""The benchmark as an LLM reinforcement-learning environment: OpenEnv (`openenv-core`), one
multi-turn tool-use episode per reset (integrations layer; the `openenv` extra).

Why OpenEnv rather than `verifiers`: OpenEnv's `Environment` is Gymnasium's reset/step with pydantic
actions and observations, served over HTTP and WebSocket by its own `create_app`, which is what this
package already is; it installs beside the `mcp` extra (verifiers 0.3 pins ``mcp<2``; 0.4 pins
``mcp==2.0.0`` and replaced its multi-turn environment API), and it needs no language-model client
to run a scripted policy. Every call goes through `mcp_server`'s episode, i.e. the env's own tool
runner, policy layer and recorder: no second implementation of any tool.

May import: every layer but the command line (it builds on `mcp_server` and `rllib`'s seed splits).
"""

from __future__ import annotations

from .rows import orca_rows, train_rows

__all__ = ["orca_rows", "train_rows"]
