"""The compile cache: reuse what earlier compiles of a graph key built (docs/cache.md).

On when the options `ge.graph_compiler_cache_dir` and `ge.graph_key` are both set. A compile
with nothing changed loads the cached model; a compile with changes recompiles only the process
points whose fingerprint changed (pass `fingerprint-subgraphs`).

- `settings`: when the cache is on, and the salt of every fingerprint;
- `incremental`: `compile_cached`, the compile that reuses;
- `store`: one key's cached models and subgraph units; `index`: the `<key>.idx` file;
  `units`: subgraph cache files; `variables`: the `.rdcpkt` file; `lock`: the key's lock;
- `resource_config`: reading and comparing resource configs;
- `files`: atomic writes, timestamped names, paths kept inside the cache directory;
- `inventory`: what `dfir cache ls|verify|prune` sees in a directory.
"""
