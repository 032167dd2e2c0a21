"""Time scikit-learn's lasso_path on the instances BenchmarkCDLasso writes,
for comparison with fwlab's cd along a λ path (the setting path,
BenchmarkCDLassoPath).

Run (one thread, CPU time):

    FWLAB_CD_DATA=/tmp/cdd go test -run '^$' -bench 'BenchmarkCDLasso$' -benchtime 1x ./internal/solver/
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/sklearn_lasso_path.py /tmp/cdd 10

For each instance it runs lasso_path over the K + 2 penalties of cd's path
with K stages, λ_max·r^k for k = 0…K+1, r = (λ/λ_max)^(1/(K+1)) (λ_max and
the instance's λ included), warm-started one from the other, with the
tolerance whose stopping rule (scikit-learn's duality gap below tol·‖y‖²)
certifies a relative suboptimality of 1e-6 at λ, tol = 1e-6·F*/‖y‖², and
prints the median CPU time (time.process_time) of REPEAT runs and the
relative suboptimality reached at λ.
"""
import os
import statistics
import sys
import time

import numpy as np
import sklearn
from sklearn.linear_model import lasso_path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sklearn_lasso import load  # noqa: E402

REPEAT = 7


def run(X, y, lam, k, tol):
    n = X.shape[0]
    lmax = np.abs(X.T @ y).max()
    lams = lmax * (lam / lmax) ** (np.arange(k + 2) / (k + 1))
    t0 = time.process_time()
    _, coefs, _ = lasso_path(X, y, alphas=lams / n, tol=tol, max_iter=1_000_000)
    t = time.process_time() - t0
    b = coefs[:, -1]
    r = y - X @ b
    return t, 0.5 * r @ r + lam * np.abs(b).sum()


def main(folder, k):
    print(f"scikit-learn {sklearn.__version__}, numpy {np.__version__}, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}, OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}, K={k}")
    for name in sorted(f[:-4] for f in os.listdir(folder) if f.endswith(".txt")):
        X, y, lam, fstar = load(os.path.join(folder, name))
        tol = 1e-6 * fstar / (y @ y)
        ts, F = [], None
        for _ in range(REPEAT):
            t, F = run(X, y, lam, k, tol)
            ts.append(t)
        print(f"{name}: lasso_path over {k + 2} penalties, tol={tol:.3g}: {statistics.median(ts) * 1e3:.1f} ms CPU, relative suboptimality {(F - fstar) / abs(fstar):.2g}")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 10)
