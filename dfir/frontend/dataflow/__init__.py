"""The dataflow frontend: graph wiring (FlowData, FlowNode, FlowGraph), process points, `@pyflow`."""
