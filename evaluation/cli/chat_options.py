"""The flags that say which chat model a command asks, shared by ``answers score`` (the judge) and
``golden write`` (the writer), and the frozen ``ChatSettings`` built from them at the edge: each flag
falls back on an environment variable, and a key is only ever read from a variable, never a flag.

    --endpoint   <PREFIX>_ENDPOINT   https://<resource>.openai.azure.com, https://api.openai.com/v1,
                                     http://127.0.0.1:8080/v1 ...
    --model      <PREFIX>_MODEL      model name, or the Azure OpenAI deployment
    --api-key-env NAME (default <PREFIX>_API_KEY): the variable holding the key
    --auth auto: a key when that variable is set, else the managed identity on Azure OpenAI, else none
"""
from __future__ import annotations

import argparse
from typing import Any, Mapping

from ..chat import AUTHS
from .common import auth_way, seconds, whole

MAX_TIMEOUT_S = 600  # a model that needs longer for one reply is not answering; nothing waits for ever
MAX_RETRIES = 10


def add_chat_options(parser: Any, role: str, prefix: str, *, flags: str = "") -> None:
    """``--endpoint``, ``--model``, ``--api``, ``--api-version``, ``--auth``, ``--api-key-env``,
    ``--client-id``, ``--timeout`` and ``--retries`` for the ``role`` model, variables named ``prefix_*``.
    ``flags`` starts every flag's name (``judge-``: ``--judge-endpoint``), for a command whose own flags
    would otherwise clash; ``chat_settings`` then takes the same ``flags``. ``parser``: a parser or a group."""
    parser.add_argument(f"--{flags}endpoint", help=f"the {role}'s endpoint (default ${prefix}_ENDPOINT)")
    parser.add_argument(f"--{flags}model", help=f"model or Azure deployment name (default ${prefix}_MODEL)")
    parser.add_argument(f"--{flags}api", choices=("auto", "azure", "openai"), default="auto",
                        help="request style (default auto: azure on *.openai.azure.com and "
                             "*.cognitiveservices.azure.com)")
    parser.add_argument(f"--{flags}api-version", default="2024-10-21",
                        help="Azure OpenAI api-version (default 2024-10-21)")
    parser.add_argument(f"--{flags}auth", type=auth_way, choices=("auto", *AUTHS), default="auto",
                        help="how to sign in (default auto; managed-identity, the old spelling, is read as "
                             "managed_identity)")
    parser.add_argument(f"--{flags}api-key-env", default=f"{prefix}_API_KEY", metavar="NAME",
                        help=f"environment variable holding the key (default {prefix}_API_KEY)")
    parser.add_argument(f"--{flags}client-id", help="a user-assigned managed identity's client id")
    parser.add_argument(f"--{flags}timeout", type=seconds(MAX_TIMEOUT_S), default=60.0,
                        help=f"seconds to wait for one reply (default 60, at most {MAX_TIMEOUT_S})")
    parser.add_argument(f"--{flags}retries", type=whole(0, MAX_RETRIES), default=2,
                        help=f"retries after a timeout or a busy service (default 2, at most {MAX_RETRIES})")


def chat_settings(args: argparse.Namespace, environ: Mapping[str, str], role: str, prefix: str,
                  settings_class: Any = None, *, flags: str = "", **extra: Any):
    """The frozen settings (``settings_class``, default ``ChatSettings`` with ``role``) from the flags
    (named with ``flags`` in front, as ``add_chat_options`` made them), falling back on ``environ``."""
    from ..chat import ChatSettings
    from ..errors import UsageError

    def given(name: str) -> Any:
        return getattr(args, (flags + name).replace("-", "_"))

    endpoint = given("endpoint") or environ.get(f"{prefix}_ENDPOINT")
    model = given("model") or environ.get(f"{prefix}_MODEL")
    if not endpoint or not model:
        raise UsageError(f"the {role} needs an endpoint and a model: --{flags}endpoint URL --{flags}model NAME, or "
                         f"{prefix}_ENDPOINT and {prefix}_MODEL")
    key_env = given("api-key-env")
    key = environ.get(key_env) or None
    auth = given("auth")
    if auth == "auto":
        probe = ChatSettings(endpoint=endpoint, model=model, api=given("api"), auth="none", role=role)
        auth = "key" if key else "managed_identity" if probe.kind == "azure" else "none"
    if auth == "key" and not key:
        raise UsageError(f"--{flags}auth key reads the key from ${key_env}, which is not set")
    if settings_class is None:
        settings_class, extra = ChatSettings, {"role": role, **extra}
    return settings_class(endpoint=endpoint, model=model, api=given("api"), api_version=given("api-version"),
                          auth=auth, api_key=key if auth == "key" else None,
                          managed_identity_client_id=given("client-id"), timeout_s=given("timeout"),
                          retries=given("retries"), **extra)
