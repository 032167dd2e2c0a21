// Number formatting, colours and the names of the metrics: pure functions,
// no DOM access (tested in the browser harness).

import PALETTE from '/palette.json' with { type: 'json' };

// fmtNum labels axis ticks so that they stay readable on log axes (uPlot's
// default prints values ≤ 1e-4 as "0").
export function fmtNum(v) {
  if (v == null || !isFinite(v)) return '';
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 1e5 || a < 1e-3) return v.toExponential(a === Math.pow(10, Math.round(Math.log10(a))) ? 0 : 1).replace('e+', 'e');
  return String(+v.toPrecision(4));
}

// fmtCell formats a table cell: '–' for a missing value.
export function fmtCell(v, digits) {
  if (v == null || (typeof v === 'number' && !isFinite(v))) return '–';
  if (typeof v !== 'number') return String(v);
  const a = Math.abs(v);
  if (a !== 0 && (a >= 1e6 || a < 1e-3)) return v.toExponential(digits || 4);
  return String(+v.toPrecision(digits || 6));
}

// COLORS are the algorithms' colours, in the order of the run's rows.
// They are the figures' palette (colour-blind safe), read from the one
// file both use, /palette.json (internal/palette).
export const COLORS = PALETTE.colors;

export function alpha(hex, a) {
  const n = parseInt(hex.slice(1), 16);
  return `rgba(${(n >> 16) & 255},${(n >> 8) & 255},${n & 255},${a})`;
}

export function rgb(hex) {
  const n = parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

// METRICS names every quantity a chart can show: a human title, a one-line
// explanation, and whether its natural axis is logarithmic. The base record
// fields come first, then the problems' own metrics (a record's "extra").
export const METRICS = {
  objective: { title: 'Objective F(x)', help: 'The exact objective at the evaluated iterates.', log: true },
  gap: { title: 'Duality gap', help: 'The Frank-Wolfe gap ⟨∇F(x), x − s⟩: a certificate, F(x) − F* ≤ gap.', log: true },
  active: { title: 'Active-set size |U|', help: 'Vertices holding weight in the iterate (summed over blocks); proximal methods: non-zero entries.', log: false },
  batch: { title: 'Batch size m_k', help: 'Samples drawn for the gradient estimate at iteration k.', log: true },
  gamma: { title: 'Step size γ', help: 'The step taken along the chosen direction (proximal methods: 1/L).', log: true },
  grad_err: { title: 'Sampled-gradient error ‖g − ∇F(x)‖', help: 'How far the batch gradient is from the full one (stochastic methods only).', log: true },
  dist_xstar: { title: 'Distance to the minimiser ‖x − x*‖', help: 'Euclidean distance of the iterate from the known minimiser.', log: true },
  kkt: { title: 'Proximal residual (KKT)', help: 'Norm of the gradient mapping L‖x − prox(x − ∇f(x)/L)‖: zero exactly at a minimiser.', log: true },
  nnz: { title: 'Support size', help: 'Entries of the coefficient vector that are not zero.', log: false },
  t_slack: { title: 'ℓ1 budget slack t − ‖β‖₁', help: 'How much of the epigraph variable t is not used by ‖β‖₁ (zero at an optimum).', log: false },
  train_acc: { title: 'Training accuracy', help: 'Fraction of training samples classified correctly.', log: false },
  support: { title: 'Support vectors', help: 'Dual variables that are not zero.', log: false },
  loss: { title: 'Squared loss ½‖Y − XB‖²', help: 'The data-fit part of the GFLASSO objective.', log: true },
  l1: { title: 'Lasso penalty λ‖B‖₁', help: 'The sparsity part of the GFLASSO objective.', log: false },
  fusion: { title: 'Fusion penalty', help: 'γ Σ_e |r_e| Σ_j |B_jm − sign(r_e) B_jl|: how differently correlated tasks are fitted.', log: false },
  p1_objective: { title: 'P1 objective (loss + Σ t_C)', help: 'The objective of the epigraph form the FW methods minimise: an upper bound on F(B).', log: true },
  t_fill: { title: 'Epigraph fill Ω(B)/Σ t_C', help: 'Share of the epigraph variables the penalty actually uses (1 at an optimum).', log: false },
  primal: { title: 'Primal objective (averaged iterate)', help: 'Structural SVM primal λ/2‖w̄‖² + mean loss at the weighted average.', log: true },
  primal_plain: { title: 'Primal objective (plain iterate)', help: 'Structural SVM primal at the current iterate, without averaging.', log: true },
  dual: { title: 'Dual objective (averaged iterate)', help: 'The dual value whose distance to the primal is the duality gap.', log: false },
  dual_plain: { title: 'Dual objective (plain iterate)', help: 'The dual value of the current iterate, without averaging.', log: false },
  gap_plain: { title: 'Duality gap (plain iterate)', help: 'The gap of the current iterate, without averaging.', log: true },
  rel_gap: { title: 'Relative duality gap', help: 'The duality gap divided by the primal objective.', log: true },
  test_err: { title: 'Test error (plain iterate)', help: 'Fraction of test letters decoded wrongly.', log: false },
  test_err_avg: { title: 'Test error (averaged iterate)', help: 'Fraction of test letters decoded wrongly by the weighted average.', log: false },
  train_err: { title: 'Training error (plain iterate)', help: 'Fraction of training letters decoded wrongly.', log: false },
  train_err_avg: { title: 'Training error (averaged iterate)', help: 'Fraction of training letters decoded wrongly by the weighted average.', log: false },
};

// metric returns the description of a metric; an unknown one is named by
// its key, so that a new metric shows before it is described here.
export function metric(key) {
  return METRICS[key] || { title: key.replace(/_/g, ' '), help: `The problem's metric "${key}".`, log: /gap|err|dist/.test(key), unknown: true };
}

// EXTRA_ORDER puts the problems' metrics that matter most first.
export const EXTRA_ORDER = ['test_err_avg', 'test_err', 'train_err_avg', 'train_err', 'rel_gap', 'dual', 'dist_xstar', 'kkt', 'p1_objective', 't_fill'];

export function extraOrder(a, b) {
  const ia = EXTRA_ORDER.indexOf(a), ib = EXTRA_ORDER.indexOf(b);
  return (ia < 0 ? 99 : ia) - (ib < 0 ? 99 : ib) || a.localeCompare(b);
}

export const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;
