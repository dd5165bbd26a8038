"""The driver side of a loaded model: `dfir.load` (loader), the feed/fetch API (model), the worker
processes it forks (process_scheduler), the servers they run on (servers, ray_cluster)."""
