"""The runtime: load an `.om` container (validated natively) and execute its plan."""
