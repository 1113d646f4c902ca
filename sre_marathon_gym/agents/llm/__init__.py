"""LLM agents for evaluation mode over any OpenAI-compatible endpoint (SRE-Marathon App. G).

`react` (function calling, fresh conversation per invocation), `rag` (retrieval + one planning
call) and `keep` (rule-based grouping + RAG's planning). Configure with `model`, `base_url` and
`api_key` arguments or `SRE_MARATHON_MODEL`, `OPENAI_BASE_URL`, `OPENAI_API_KEY`. Needs the `llm`
extra (`pip install 'sre-marathon-gym[llm]'`); importing this package does not.
"""

from __future__ import annotations

from .base import LLMAgent
from .config import LLMConfig, resolve_config
from .keep import KeepAgent
from .rag import RAGAgent
from .react import ReActAgent

LLM_AGENTS: dict[str, type[LLMAgent]] = {"react": ReActAgent, "rag": RAGAgent, "keep": KeepAgent}

__all__ = ["LLM_AGENTS", "KeepAgent", "LLMAgent", "LLMConfig", "RAGAgent", "ReActAgent", "resolve_config"]
