"""The next-edit HTTP client: one OpenAI-compatible ``POST {base_url}/chat/completions`` call.

Implements ``analysis.nextedit.CompletionClient`` for OpenAI, Ollama (``http://127.0.0.1:11434/v1``),
llama.cpp's server and anything else speaking the chat-completions dialect. It imports httpx but
not pygls, so ``cli.py`` can use it without loading the language server.

The API key is read once, at construction, from the environment variable *named* by
``Settings.llm_api_key_env``; it is sent as ``Authorization: Bearer`` only when that variable is
set, and it never appears in a log line, an exception message or ``repr``.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Any

import httpx

from impact_ls.config import Settings

logger = logging.getLogger(__name__)


class HttpCompletionClient:
    """A chat-completions client built from ``Settings``; each ``complete`` is one request."""

    __slots__ = ("_api_key", "base_url", "model", "timeout_s")

    def __init__(self, settings: Settings, *, environ: Mapping[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        self.base_url = settings.llm_base_url.rstrip("/")
        self.model = settings.llm_model
        self.timeout_s = settings.llm_timeout_s
        key_env = settings.llm_api_key_env
        self._api_key = env.get(key_env, "") if key_env else ""

    def __repr__(self) -> str:
        key = "set" if self._api_key else "unset"
        return f"HttpCompletionClient(base_url={self.base_url!r}, model={self.model!r}, key={key})"

    @property
    def url(self) -> str:
        """The endpoint that ``complete`` posts to."""
        return f"{self.base_url}/chat/completions"

    def complete(
        self, messages: list[dict[str, str]], *, temperature: float, max_tokens: int
    ) -> str:
        """Post ``messages`` once and return ``choices[0].message.content``; raise on failure."""
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": temperature,
            # max_tokens, not max_completion_tokens: the one every compatible server accepts.
            "max_tokens": max_tokens,
        }
        logger.debug(
            "POST %s model=%r messages=%d max_tokens=%d",
            self.url,
            self.model,
            len(messages),
            max_tokens,
        )
        with httpx.Client(timeout=httpx.Timeout(self.timeout_s)) as client:
            response = client.post(self.url, json=body, headers=headers)
        response.raise_for_status()
        return _content(response.json())


def _content(data: object) -> str:
    """``choices[0].message.content`` of a chat-completions reply, or ``ValueError``."""
    try:
        content = data["choices"][0]["message"]["content"]  # type: ignore[index]
    except (KeyError, IndexError, TypeError) as exc:
        raise ValueError("chat-completions reply has no choices[0].message.content") from exc
    if not isinstance(content, str):
        raise ValueError("chat-completions reply content is not a string")
    return content


def client_from_settings(settings: Settings) -> HttpCompletionClient | None:
    """The configured client, or ``None`` when no ``llm_base_url`` is set."""
    if not settings.llm_base_url.strip():
        return None
    return HttpCompletionClient(settings)
