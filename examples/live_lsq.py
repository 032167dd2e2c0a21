#!/usr/bin/env python3
"""Log a hand-written solver's iterates live to a running fwlab dashboard.

Two methods minimise f(x) = 1/2 ||Ax - b||^2 over the box [0, 1]^n, with b
made as A x* for an x* inside the box (so F* = 0): projected gradient
descent (trace "pgd") and Frank-Wolfe with exact line search (trace "fw").
Each iteration's objective and Frank-Wolfe gap <grad f(x), x - s> (s the
box's vertex minimising <grad f(x), s>) go to the dashboard in batches; the
run page draws them as they arrive.

Standard library only (urllib, json). The protocol is docs/live.md.

    python3 examples/live_lsq.py --url http://localhost:8080
"""

import argparse
import json
import random
import sys
import time
import urllib.error
import urllib.request


class DashboardError(Exception):
    """A request the dashboard refused: its status, field and rule."""

    def __init__(self, status, field, message):
        super().__init__(f"{status} {field}: {message}" if field else f"{status}: {message}")
        self.status, self.field, self.message = status, field, message


def post(url, body, token=None):
    """POST body as JSON to url; return the decoded answer or raise DashboardError."""
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
    req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return json.load(resp)
    except urllib.error.HTTPError as e:
        try:
            err = json.load(e)
        except ValueError:
            err = {"error": str(e), "field": ""}
        raise DashboardError(e.code, err.get("field", ""), err.get("error", "")) from None


class LiveRun:
    """A run opened on a dashboard: record() queues, a batch goes every
    `batch` records or `every` seconds, end() sends the rest and ends it."""

    def __init__(self, base, problem, traces, fstar=None, iters=0, batch=200, every=0.25):
        self.base = base.rstrip("/")
        opened = post(self.base + "/api/live/runs",
                      {"problem": problem, "traces": traces, "fstar": fstar, "iters": iters})
        self.id, self.token = opened["id"], opened["token"]
        self.page = self.base + opened["page"]
        self.batch, self.every = batch, every
        self.queue, self.last = [], time.monotonic()

    def record(self, trace, k, objective=None, gap=None, step="none", gamma=0.0, passes=None,
               time_s=0.0, active=1, extra=None):
        rec = {"trace": trace, "k": k, "passes": float(k if passes is None else passes), "time_s": time_s,
               "step": step, "gamma": gamma, "batch": 0, "active": active}
        if objective is not None:
            rec["objective"] = objective
        if gap is not None:
            rec["gap"] = gap
        if extra:
            rec["extra"] = extra
        self.queue.append(rec)
        if len(self.queue) >= self.batch or time.monotonic() - self.last >= self.every:
            self.flush()

    def flush(self):
        if self.queue:
            post(f"{self.base}/api/live/runs/{self.id}/records", {"records": self.queue}, self.token)
        self.queue, self.last = [], time.monotonic()

    def end(self, status, message=""):
        self.flush()
        return post(f"{self.base}/api/live/runs/{self.id}/end", {"status": status, "message": message}, self.token)


def problem(n, m, seed):
    """A, b and L = ||A||_2^2 (by power iteration) with b = A x*, x* in the box."""
    rng = random.Random(seed)
    A = [[rng.gauss(0, 1) for _ in range(n)] for _ in range(m)]
    xstar = [rng.uniform(0.2, 0.8) for _ in range(n)]
    b = [sum(a * x for a, x in zip(row, xstar)) for row in A]
    v = [1.0] * n
    for _ in range(100):
        Av = [sum(a * x for a, x in zip(row, v)) for row in A]
        w = [sum(A[i][j] * Av[i] for i in range(m)) for j in range(n)]
        norm = sum(x * x for x in w) ** 0.5
        v = [x / norm for x in w]
    Av = [sum(a * x for a, x in zip(row, v)) for row in A]
    return A, b, sum(x * x for x in Av)


def state(A, b, x):
    """f(x), its gradient, the box's FW vertex s and the gap <g, x - s>."""
    r = [sum(a * xj for a, xj in zip(row, x)) - bi for row, bi in zip(A, b)]
    f = 0.5 * sum(ri * ri for ri in r)
    g = [sum(A[i][j] * r[i] for i in range(len(A))) for j in range(len(x))]
    s = [1.0 if gj < 0 else 0.0 for gj in g]
    gap = sum(gj * (xj - sj) for gj, xj, sj in zip(g, x, s))
    return f, g, s, gap


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", default="http://localhost:8080", help="the dashboard")
    ap.add_argument("--iters", type=int, default=300, help="iterations of each method")
    ap.add_argument("--n", type=int, default=20, help="variables")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--delay", type=float, default=0.0, help="seconds to sleep per iteration (to watch it live)")
    args = ap.parse_args()

    A, b, L = problem(args.n, 2 * args.n, args.seed)
    try:
        run = LiveRun(args.url, f"box least squares (n = {args.n})", ["pgd", "fw"], fstar=0.0, iters=args.iters)
    except (DashboardError, urllib.error.URLError) as e:
        print(f"live_lsq: opening the run: {e}", file=sys.stderr)
        return 1
    print(run.page, flush=True)
    start = time.monotonic()
    try:
        x = [0.0] * args.n  # projected gradient, step 1/L
        for k in range(args.iters + 1):
            f, g, _, gap = state(A, b, x)
            run.record("pgd", k, objective=f, gap=gap, step="pgd", gamma=1 / L, time_s=time.monotonic() - start,
                       active=args.n, extra={"step_norm": sum(gj * gj for gj in g) ** 0.5 / L})
            x = [min(1.0, max(0.0, xj - gj / L)) for xj, gj in zip(x, g)]
            time.sleep(args.delay)
        y = [0.0] * args.n  # Frank-Wolfe, exact line search on the quadratic
        for k in range(args.iters + 1):
            f, g, s, gap = state(A, b, y)
            d = [sj - yj for sj, yj in zip(s, y)]
            Ad = [sum(a * dj for a, dj in zip(row, d)) for row in A]
            dd = sum(v * v for v in Ad)
            gamma = 0.0 if dd == 0 else min(1.0, max(0.0, gap / dd))
            run.record("fw", k, objective=f, gap=gap, step="fw", gamma=gamma, time_s=time.monotonic() - start)
            y = [yj + gamma * dj for yj, dj in zip(y, d)]
            time.sleep(args.delay)
        ended = run.end("max_iters")
    except (DashboardError, OSError) as e:  # refused, or the dashboard unreachable (URLError is an OSError)
        print(f"live_lsq: logging stopped: {e}", file=sys.stderr)
        try:
            run.queue = []  # what was refused is not sent again
            run.end("failed", str(e))
        except (DashboardError, OSError):
            pass
        return 1
    print(f"run {ended['id']}: {ended['status']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
