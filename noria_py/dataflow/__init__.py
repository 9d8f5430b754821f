"""The dataflow: operators, their state, the shared graph and how deltas move through it."""
