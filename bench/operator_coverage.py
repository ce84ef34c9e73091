"""The INT operator list's coverage (issue #32's bar): per row, whether it reaches each
Ethos-U NPU with 0 CPU ops (Vela) and its SNR against the float model beside the PT2E
model's own; the figure is the rows that reach both NPUs in a8w8 within 1 dB of the PT2E
model's SNR (or >= 40 dB) over all rows.

    PYTHONPATH=python python bench/operator_coverage.py [--alone]

One combined model (`operators.Between`) of every row without a limit, as
test/e2e/test_operator_list.py builds it, or (--alone) every row alone (minutes each).
"""

from __future__ import annotations

import argparse

import torch

import torch2tosa
from torch2tosa import checking
from torch2tosa.examples import operators

U55, U85 = operators.ACCELERATORS


def measure(rows, scheme: str, target: str, accelerators) -> dict:
    model = operators.Between(rows).eval()
    torch.manual_seed(1)
    calibration = [(torch.randn(operators.INPUT_SHAPE),) for _ in range(8)]
    quantized = torch2tosa.quantize(model, calibration, scheme=scheme)
    compiled = torch2tosa.compile(quantized, calibration[0], target=target)
    x = torch.randn(operators.INPUT_SHAPE)
    with torch.no_grad():
        floats, pt2e = model(x), quantized(x)
    report = compiled.check(x)
    cpu = {a: compiled.vela(a).cpu_ops for a in accelerators}
    return {row.name: (report.outputs[i].float_snr_db,
                       checking.snr_db([floats[i].numpy()], [pt2e[i].numpy()]), cpu)
            for i, row in enumerate(rows)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--alone", action="store_true")
    args = parser.parse_args()
    rows = operators.rows()
    runnable = [r for r in rows if not r.limit]
    results = {}
    if args.alone:
        for row in runnable:
            results |= measure([row], "a8w8", U55, (U55, U85))
    else:
        results = measure(runnable, "a8w8", U55, (U55, U85))
    passing = 0
    print("| row | SNR dB | PT2E SNR dB | CPU ops U55/U85 | bar |")
    print("|---|---|---|---|---|")
    for row in rows:
        if row.name not in results:
            print(f"| {row.name} | | | | limit: {'; '.join(row.limit.values())} |")
            continue
        snr, pt2e, cpu = results[row.name]
        ok = cpu[U55] == cpu[U85] == 0 and (snr >= pt2e - 1.0 or snr >= 40.0)
        passing += ok
        print(f"| {row.name} | {snr:.1f} | {pt2e:.1f} | {cpu[U55]}/{cpu[U85]} | "
              f"{'yes' if ok else 'no'} |")
    print(f"\n{passing} of {len(rows)} rows reach both NPUs in a8w8 with 0 CPU ops within 1 dB "
          f"of the PT2E model's SNR (or >= 40 dB): {100 * passing / len(rows):.1f}%")


if __name__ == "__main__":
    main()
