"""A GE graph for the CLI tests: x + x over a vector of any length."""
import dfir.data_type as dt
from dfir.ge.graph import Graph

graph = Graph("doubler")
x = graph.data(0, shape=[-1], dtype=dt.DT_FLOAT, name="x")
graph.set_outputs([graph.add(x, x)])
