"""torch2tosa's Model Explorer extension (`pip install 'torch2tosa[explorer]'`):

    model-explorer NAME.tosa --extensions=torch2tosa.inspection.explorer_extension

Model Explorer loads `<extension>.main`, whose adapter opens a `.tosa` by reading the
NAME_explorer.json written beside it (`CompiledModel.save_view`, `torch2tosa-compile
--inspect`): the TOSA ops grouped under the PyTorch modules with the per-layer figures.
Without Model Explorer's Python package the same JSON loads in its web UI as a graph file.
"""
