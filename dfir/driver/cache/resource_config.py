"""The resource (numa) configuration a model is compiled for, as far as the cache needs it.

Its path is the option `ge.resourceConfigPath` or, failing that, the environment variable
`RESOURCE_CONFIG_PATH`. Here it is only read as a JSON object, stored in the `.om`
(`RESOURCE_CONFIG` partition, canonical JSON) and compared: a model compiled for one
configuration runs only where the configuration is the same, except `ipaddr` fields (the seeds'
offline-deploy rule). Full validation of the file's contents belongs to placement.
"""
from __future__ import annotations

import json
import os
from typing import Mapping

from dfir.core.errors import GeError
from dfir.core.json_text import NotJson, decode_json

__all__ = ["IGNORED_FIELD", "RESOURCE_CONFIG_ENV", "RESOURCE_CONFIG_OPTION", "canonical_config",
           "config_differences", "load_resource_config", "resource_config_path"]

RESOURCE_CONFIG_OPTION = "ge.resourceConfigPath"
RESOURCE_CONFIG_ENV = "RESOURCE_CONFIG_PATH"
IGNORED_FIELD = "ipaddr"


def resource_config_path(options: Mapping[str, str]) -> str | None:
    """The configured resource config path (option first, then environment), or None."""
    return options.get(RESOURCE_CONFIG_OPTION) or os.environ.get(RESOURCE_CONFIG_ENV) or None


def load_resource_config(path: str) -> dict:
    """The JSON object in `path`; a GeError naming the file when it is unreadable or not one."""
    try:
        with open(path, "rb") as file:
            config = decode_json(file.read())
    except OSError as error:
        raise GeError(f"cannot read the resource config: {error.strerror}", context={"file": path}) from None
    except NotJson as error:
        raise GeError(f"the resource config is not valid JSON: {error}", context={"file": path}) from None
    if not isinstance(config, dict):
        raise GeError(f"the resource config must be a JSON object, got {type(config).__name__}",
                      context={"file": path})
    return config


def canonical_config(config: dict) -> bytes:
    """The bytes stored in the `.om`: sorted keys, no spaces, UTF-8."""
    return json.dumps(config, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def config_differences(compiled: object, here: object, path: str = "$") -> list[str]:
    """Where `here` differs from `compiled`, ignoring `ipaddr` fields: one line per JSON path.

        >>> config_differences({"a": [1, 2]}, {"a": [1, 3]})
        ['$.a[1]: compiled with 2, here 3']
    """
    if isinstance(compiled, dict) and isinstance(here, dict):
        lines = []
        for key in sorted(set(compiled) | set(here)):
            if key == IGNORED_FIELD:
                continue
            where = f"{path}.{key}"
            if key not in here:
                lines.append(f"{where}: compiled with {_show(compiled[key])}, missing here")
            elif key not in compiled:
                lines.append(f"{where}: not in the compiled config, here {_show(here[key])}")
            else:
                lines += config_differences(compiled[key], here[key], where)
        return lines
    if isinstance(compiled, list) and isinstance(here, list):
        if len(compiled) != len(here):
            return [f"{path}: compiled with {len(compiled)} items, here {len(here)}"]
        return [line for i, (a, b) in enumerate(zip(compiled, here))
                for line in config_differences(a, b, f"{path}[{i}]")]
    if compiled != here or type(compiled) is not type(here):
        return [f"{path}: compiled with {_show(compiled)}, here {_show(here)}"]
    return []


def _show(value: object) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."
