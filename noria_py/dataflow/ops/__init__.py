"""One operator per module, each implementing the contract in ``noria_py.dataflow.node``."""
