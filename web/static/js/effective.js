// What a run spec means once its defaults are resolved, and what to call a
// run: the compare page's spec diff shows the differences that act on the
// run, not those of spelling (a default left out against the same value
// written), and names runs by their name, else their swept values, else
// their algorithms and id. Pure functions, no DOM access (tested in the
// browser harness).

import { uses, algorithm, problemEntry } from './rules.js';

const num = (v) => {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return v;
};

// effectiveAlgo resolves one algorithm row as internal/spec's Normalize
// does, and keeps only the fields that act on this algorithm on this
// problem (a schedule's ρ only under the paper's schedule, L only where
// the step uses it, r only for block methods, μ, ε and the table's other
// settings only for those the algorithm table gives them: spg's μ and ε,
// cd's path).
export function effectiveAlgo(a, problem, cat) {
  const d = (cat && cat.defaults) || {};
  const stochastic = new Set(((cat && cat.algorithms) || []).filter((x) => x.stochastic).map((x) => x.name));
  const algo = a.algo;
  const st = stochastic.has(algo);
  const use = uses(algo, st, problem, cat);
  const out = { algo };
  if (use.stepsize) out.stepsize = a.stepsize || algorithm(cat, algo).stepsize || d.stepsize || 'curvature';
  if (use.L) out.L = a.L ? String(a.L) : d.L || 'auto';
  if (st) {
    const sch = a.schedule || d.schedule || 'paper';
    out.schedule = sch;
    if (sch === 'paper') {
      out.rho = a.rho || d.rho || 0.1;
      out.alpha = a.alpha || d.alpha || 0.5;
    }
    if (sch === 'constant' || sch === 'geometric') out.m0 = a.m0 || d.m0 || 1;
    if (sch === 'geometric') out.growth = a.growth || d.growth || 1.1;
  }
  if (use.r) out.r = a.r || 'all blocks';
  const settings = algorithm(cat, algo).settings || []; // the table's (spg's smoothing: mu, eps)
  if (settings.includes('mu')) out.mu = a.mu || 'from ε';
  if (settings.includes('eps') && a.eps) out.eps = a.eps;
  // any other setting of the table's (cd's path): its value when given,
  // zero or empty being the spec's default
  for (const k of settings) if (k !== 'mu' && k !== 'eps' && a[k] != null && a[k] !== '' && num(a[k]) !== 0) out[k] = num(a[k]);
  if (a.caratheodory) out.caratheodory = true;
  if (problemEntry(cat, problem).averages) out.no_average = !!a.no_average;
  return out;
}

// effectiveSpec resolves a run spec's defaults (the problem's parameters
// from the catalogue GET /api/scenarios, the run's limits, each
// algorithm) and leaves out what does not act on the run's results
// (start_paused, the worker count).
export function effectiveSpec(spec, cat) {
  spec = spec || {};
  const d = (cat && cat.defaults) || {};
  const prob = ((cat && cat.problems) || []).find((p) => p.name === spec.problem);
  const params = {};
  for (const p of (prob && prob.params) || []) if (p.default != null && p.default !== '') params[p.name] = num(p.default);
  for (const [k, v] of Object.entries(spec.params || {})) params[k] = num(v);
  const out = { problem: spec.problem };
  if (Object.keys(params).length) out.params = params;
  out.replications = spec.replications || d.replications || 1;
  out.seed = spec.seed || 0;
  out.iters = spec.iters || d.iters || 1000;
  out.passes = spec.passes || 'no limit';
  out.gap = spec.gap || 'no gap test';
  out.eval_every = spec.eval_every || d.eval_every || 'adaptive';
  out.algorithms = (spec.algorithms || []).map((a) => effectiveAlgo(a || {}, spec.problem, cat));
  return out;
}

// GREEK names the swept parameters that have a symbol.
const GREEK = { rho: 'ρ', alpha: 'α', gamma: 'γ', lambda: 'λ', mu: 'μ', eps: 'ε' };

// paramName says a sweep path in words: "ρ of ssfw-as", "λ", "iters".
export function paramName(path, spec) {
  const m = /^algorithms\[(\d+)\]\.(.+)$/.exec(path);
  if (m) {
    const a = spec && spec.algorithms && spec.algorithms[+m[1]];
    return `${GREEK[m[2]] || m[2]} of ${a ? a.algo : 'algorithm ' + (+m[1] + 1)}`;
  }
  const p = path.startsWith('params.') ? path.slice(7) : path;
  return GREEK[p] || p;
}

// runLabel names a run: its name, else its swept values (values: {path:
// value} of its sweep cell), else its algorithms and id.
// defaultName is the name the server gives a new run (its problem and its
// algorithms as its traces are named); ownName is a name the user gave.
export function defaultName(run) {
  const spec = (run && run.spec) || {};
  const algos = [...new Set((run.traces || []).filter((t) => !t.replication).map((t) => t.algo))];
  return `${spec.problem || ''}: ${algos.join(', ')}`;
}
export const ownName = (run) => !!(run && run.name) && run.name !== defaultName(run);

export function runLabel(run, values) {
  if (ownName(run)) return run.name;
  const spec = (run && run.spec) || {};
  if (values && Object.keys(values).length)
    return Object.entries(values)
      .map(([k, v]) => `${paramName(k, spec)} = ${v}`)
      .join(', ');
  const algos = [...new Set((spec.algorithms || []).map((a) => a.algo))];
  return `${algos.join(' vs ') || spec.problem || 'run'} · ${run && run.id ? run.id : ''}`.replace(/ · $/, '');
}
