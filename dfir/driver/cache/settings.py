"""When the compile cache is on, where it lives, and the salt of every fingerprint.

The cache is on when the options `ge.graph_compiler_cache_dir` and `ge.graph_key` are both set
and non-empty (the seeds' rule). The key's spelling is checked with the other options
(`dfir.frontend.options`); the directory must exist, as in GE: the cache does not create it.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from typing import Mapping

from dfir.core.errors import GeError
from dfir.core.version import VERSION
from dfir.driver.cache.resource_config import RESOURCE_CONFIG_OPTION
from dfir.om.schema import OM_IR_VERSION

__all__ = ["CACHE_DIR_OPTION", "DEPLOY_INFO_OPTION", "GRAPH_KEY_OPTION", "CacheSettings",
           "cache_settings", "compile_salt"]

CACHE_DIR_OPTION = "ge.graph_compiler_cache_dir"
GRAPH_KEY_OPTION = "ge.graph_key"
RUN_FLAG_OPTION = "ge.runFlag"
DEPLOY_INFO_OPTION = "ge.experiment.data_flow_deploy_info_path"

# Options that do not change what is compiled (or, for paths, whose file contents are hashed
# or compared instead of the path).
_NOT_IN_SALT = frozenset({CACHE_DIR_OPTION, GRAPH_KEY_OPTION, RUN_FLAG_OPTION, "log_level",
                          RESOURCE_CONFIG_OPTION, DEPLOY_INFO_OPTION})


@dataclass(frozen=True)
class CacheSettings:
    """An active cache: its directory, the graph key, and whether this compile only compiles
    (`ge.runFlag=0`: an offline compile for another machine) rather than compiling to run."""

    directory: str
    key: str
    offline: bool


def cache_settings(options: Mapping[str, str]) -> CacheSettings | None:
    """The cache the (validated) options turn on, or None; a GeError if its directory is missing."""
    directory, key = options.get(CACHE_DIR_OPTION), options.get(GRAPH_KEY_OPTION)
    if not directory or not key:
        return None
    if not os.path.isdir(directory):
        raise GeError(f"the cache directory {directory!r} does not exist or is not a directory; "
                      "create it first", context={"option": CACHE_DIR_OPTION})
    return CacheSettings(directory, key, options.get(RUN_FLAG_OPTION) == "0")


def compile_salt(options: Mapping[str, str], pipeline: str) -> str:
    """A digest of what, besides the IR, decides the compiled output: dfir's version, the `.om`
    IR version, the pass pipeline (passes and their options), the compile options, and the
    deploy info file's contents."""
    document = {
        "dfir": VERSION,
        "om_ir_version": OM_IR_VERSION,
        "pipeline": pipeline,
        "options": {k: v for k, v in sorted(options.items()) if k not in _NOT_IN_SALT},
        "deploy_info": _file_digest(options.get(DEPLOY_INFO_OPTION)),
    }
    text = json.dumps(document, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def _file_digest(path: str | None) -> str | None:
    """The SHA-256 of a file's bytes; for a file that cannot be read, its path (whoever reads
    the file reports the problem)."""
    if not path:
        return None
    try:
        with open(path, "rb") as file:
            return hashlib.sha256(file.read()).hexdigest()
    except OSError:
        return f"unreadable {path}"
