// The start page's rules, mirrored from internal/spec so that a mistake
// shows before the round trip: pure functions, no DOM access.

export function isInt(s) {
  return /^[+-]?\d+$/.test(String(s).trim());
}

export function num(s) {
  const t = String(s).trim();
  if (t === '') return NaN;
  const v = Number(t);
  return isFinite(v) ? v : NaN;
}

const q = (s) => JSON.stringify(String(s));

export function checkParam(p, raw) {
  const v = String(raw).trim();
  const fail = () => `${p.rule}, got ${q(v)}`;
  switch (p.kind) {
    case 'int':
    case 'float': {
      if (p.kind === 'int' && !isInt(v)) return fail();
      const x = num(v);
      if (isNaN(x)) return fail();
      if (p.min != null && (x < p.min || (p.min_exclusive && x === p.min))) return fail();
      if (p.max != null && (x > p.max || (p.max_exclusive && x === p.max))) return fail();
      return '';
    }
    case 'choice':
      return (p.choices || []).includes(v) ? '' : fail();
    case 'bool':
      return v === 'true' || v === 'false' ? '' : fail();
  }
  return '';
}

// Algorithms whose step is not chosen by a step-size rule and that take no
// L: spg (1/L of its smoothed problem, from the data and μ) and the
// structural SVM solvers (exact line search, or 1/k for ssg), and cd (each
// coordinate minimised exactly). fista and pgd do take both: their step is
// 1/L, or backtracking on L.
const OWN_STEP = new Set(['spg', 'bcfw-as', 'ssg', 'cd']);

// NO_RULE are the algorithms whose spec must not name a step-size rule or
// an L at all (the server rejects any but the defaults): the form leaves
// them out of the spec when their controls are hidden.
const NO_RULE = new Set(['cd']);

// specRule returns the stepsize and L fields a spec gives an algorithm row.
export function specRule(a) {
  return NO_RULE.has(a.algo) ? {} : { stepsize: a.stepsize, L: a.L };
}

// algoText is an algorithm's name as the form's menu shows it: a baseline
// that is not a method of the paper says so (the catalogue's not_in_paper).
export function algoText(name, cat) {
  return cat && cat.not_in_paper && cat.not_in_paper[name] ? `${name} (baseline, not in the paper)` : name;
}

// uses says which controls of an algorithm row apply to an algorithm:
// {stepsize, L, schedule, r}.
export function uses(algo, stochastic, problem) {
  const ssvm = typeof problem === 'string' && problem.startsWith('ssvm');
  return {
    stepsize: !OWN_STEP.has(algo) && !ssvm,
    L: !OWN_STEP.has(algo) && !ssvm,
    schedule: !!stochastic,
    r: algo.startsWith('bc'),
  };
}

// checkAlgo checks an algorithm row; blocks (the instance's q from its
// preview), when known, bounds r as the server does.
export function checkAlgo(a, stochastic, blocks, use) {
  use = use || { stepsize: true, L: true };
  const errs = {};
  if (use.stepsize && ['open-loop', 'short'].includes(a.stepsize) && a.algo !== 'fw')
    errs.stepsize = `${q(a.stepsize)} is a rule of fw only (use paper, curvature or backtrack)`;
  if (use.L && a.L !== 'auto') {
    const l = num(a.L);
    if (!(l > 0)) errs.L = `must be a positive number or "auto", got ${q(a.L)}`;
  }
  if (stochastic) {
    if (a.schedule === 'paper') {
      if (!(a.rho > 0 && a.rho < 1)) errs.rho = `must lie strictly between 0 and 1, got ${a.rawRho}`;
      if (!(a.alpha > 0 && a.alpha < 1)) errs.alpha = `must lie strictly between 0 and 1, got ${a.rawAlpha}`;
    }
    if (a.schedule === 'constant' || a.schedule === 'geometric') {
      if (!isInt(a.rawM0) || a.m0 < 1) errs.m0 = `must be at least 1, got ${a.rawM0}`;
    }
    if (a.schedule === 'geometric' && !(a.growth > 1)) errs.growth = `must be a number greater than 1, got ${a.rawGrowth}`;
  }
  if (a.rawR !== undefined && (!isInt(a.rawR) || a.r < 0)) errs.r = `must be at least 1 (or 0 for all blocks), got ${a.rawR}`;
  else if (a.rawR !== undefined && blocks > 0 && a.r > blocks) errs.r = `must be at most the number of blocks q = ${blocks}, got ${a.r}`;
  return errs;
}
