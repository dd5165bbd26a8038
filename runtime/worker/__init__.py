"""A device worker: the process that builds its device's nodes (host, udf_project, batching,
flow_closures) and fires them (executor)."""
