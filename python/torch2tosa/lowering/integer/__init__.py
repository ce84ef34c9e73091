"""The TOSA INT profile's numerics: RESCALE and TABLE math (`quant_math`), quantization
parameters read off Q/DQ ops (`qparams`), and the integer lowerings and cells.
"""
