"""The UDF authoring API that UDF code is written against; `dfir.flow_func` re-exports it."""
