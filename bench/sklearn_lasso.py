"""Time scikit-learn's Lasso on the instances BenchmarkCDLasso writes.

Run (one thread, CPU time):

    FWLAB_CD_DATA=/tmp/cdd go test -run '^$' -bench BenchmarkCDLasso -benchtime 1x ./internal/solver/
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/sklearn_lasso.py /tmp/cdd

For each instance it fits Lasso(alpha = λ/n, no intercept) in two ways:
  - "certified": tol chosen so that scikit-learn's own stopping rule (its
    duality gap below tol·‖y‖²) certifies a relative suboptimality of 1e-6,
    tol = 1e-6·F*/‖y‖², the stopping rule that matches fwlab's gap test;
  - "loosest": the loosest tol of a decade grid whose result is in fact within
    1e-6 of F* (scikit-learn's best case, checked against F* after the fact).
It prints the median CPU time (time.process_time) of REPEAT fits of each.
"""
import os
import statistics
import sys
import time

import numpy as np
import sklearn
from sklearn.linear_model import Lasso

REPEAT = 7


def load(base):
    meta = dict(line.split() for line in open(base + ".txt"))
    n, p = int(meta["n"]), int(meta["p"])
    X = np.fromfile(base + ".X", dtype="<f8").reshape(n, p)
    y = np.fromfile(base + ".y", dtype="<f8")
    return np.asfortranarray(X), y, float(meta["lambda"]), float(meta["fstar"])


def fit(X, y, lam, tol):
    n = X.shape[0]
    m = Lasso(alpha=lam / n, fit_intercept=False, tol=tol, max_iter=1_000_000, selection="cyclic")
    t0 = time.process_time()
    m.fit(X, y)
    t = time.process_time() - t0
    r = y - X @ m.coef_
    F = 0.5 * r @ r + lam * np.abs(m.coef_).sum()
    return t, F, m.n_iter_


def timed(X, y, lam, tol, fstar):
    ts, F, it = [], None, None
    for _ in range(REPEAT):
        t, F, it = fit(X, y, lam, tol)
        ts.append(t)
    return statistics.median(ts), (F - fstar) / abs(fstar), it


def main(folder):
    print(f"scikit-learn {sklearn.__version__}, numpy {np.__version__}, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}, OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}")
    for name in sorted(f[:-4] for f in os.listdir(folder) if f.endswith(".txt")):
        X, y, lam, fstar = load(os.path.join(folder, name))
        tc = 1e-6 * fstar / (y @ y)
        t, rel, it = timed(X, y, lam, tc, fstar)
        print(f"{name}: certified tol={tc:.3g}: {t*1e3:.1f} ms CPU, {it} sweeps, relative suboptimality {rel:.2g}")
        for tol in [10.0 ** -k for k in range(1, 13)]:
            t1, F, _ = fit(X, y, lam, tol)
            if (F - fstar) / abs(fstar) <= 1e-6:
                t, rel, it = timed(X, y, lam, tol, fstar)
                print(f"{name}: loosest tol={tol:.0e}: {t*1e3:.1f} ms CPU, {it} sweeps, relative suboptimality {rel:.2g}")
                break


if __name__ == "__main__":
    main(sys.argv[1])
