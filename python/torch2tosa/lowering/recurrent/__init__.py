"""One recurrence for every recurrent op (GRU, LSTM, RNN and their cells), FP or INT:
reading the op (`op`), the driver (`rewrite`), layers (`layers`), the unrolled and loop
forms (`sequence`, `loop`) and the float cells (`float_cells`).
"""
