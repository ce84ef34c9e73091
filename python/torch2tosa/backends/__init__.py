"""What reads the TOSA we produce: the `.tosa` translator, the TOSA reference model, Vela
(Ethos-U) and IREE (llvm-cpu). Nothing here changes a graph.
"""
