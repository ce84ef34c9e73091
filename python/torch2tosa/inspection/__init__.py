"""Looking inside a compiled model: per-layer accuracy (`accuracy`, `report`), per-layer NPU
cost (`vela_layers`) and a picture of the graph (`graph_view`), each mapped to the PyTorch
modules and source lines. A layer above checking and the backends, below the API, which
passes it its compile function (docs/inspect.md)."""
