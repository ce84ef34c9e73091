"""Infrastructure every layer uses, with no knowledge of TOSA or PyTorch models: errors and
diagnostics, what a pass is (`pass_base`), progress events, atomic file writes, op counts.
"""
