"""The front end: a PyTorch model -> torch-dialect MLIR (torch.export, decompositions, the FX
importer), refusing what TOSA cannot express with the model's source line.
"""
