#!/usr/bin/env python3
"""A parameter sweep from Python: a cloth hung by two corners and left to settle, at several XPBD
compliances of its edges and several iteration counts. It prints and plots the mean edge strain
at rest: where the compliance is large, every iteration count gives the same strain (XPBD's
stiffness does not depend on them); where it is small, the strain left is the solver's
unconverged error, and more iterations lower it.

    python3 examples/python/stiffness_sweep.py --out sweep.png

Needs the pbd module on PYTHONPATH (build/python, or the installed dist-packages) and
matplotlib (Debian: python3-matplotlib).
"""
import argparse

import numpy as np

import pbd


def hang(compliance, iterations, frames):
    """The settled cloth: how far its lowest point hangs below the pins (m), and its mean strain."""
    w = pbd.World(dt=1 / 60, substeps=10, iterations=iterations, formulation="xpbd", damping=0.9)
    n = 21
    w.add_cloth(n, n, size=(1, 1), pinned=[0, n - 1], mass=0.1, compliance=compliance, bend=False)
    w.step(frames)
    return -float(w.positions[:, 1].min()), w.stats()["mean_strain"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=180, help="steps of 1/60 s per run (default 180)")
    ap.add_argument("--out", default="stiffness_sweep.png", help="the plot (PNG)")
    args = ap.parse_args()

    compliances = np.logspace(-6, -1, 6)
    iterations = (2, 8, 32)
    print("compliance_m_per_N iterations sag_m mean_strain")
    rows = []
    for c in compliances:
        for it in iterations:
            sag, strain = hang(c, it, args.frames)
            rows.append((c, it, sag, strain))
            print(f"{c:.1e} {it} {sag:.5f} {strain:.6f}")

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 4))
    for it, style in zip(iterations, ("o-", "s--", "^:")):
        sel = [r for r in rows if r[1] == it]
        ax.loglog([r[0] for r in sel], [r[3] for r in sel], style, label=f"{it} iterations")
    ax.set(xlabel="compliance (m/N)", ylabel="mean edge strain at rest",
           title=f"21 x 21 cloth, 1 m, 0.1 kg, XPBD, 10 substeps, t = {args.frames / 60:.1f} s")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"# wrote {args.out}")


if __name__ == "__main__":
    main()
