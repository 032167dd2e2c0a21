// The start page's rules, so that a mistake shows before the round trip:
// pure functions, no DOM access. An algorithm's rules come from the
// catalogue's table (GET /api/scenarios, embedded in the start page),
// never from a copy here.

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

// algorithm is an algorithm's entry in the catalogue's table (the
// algorithms of GET /api/scenarios, which the start page embeds): its
// step-size rules and default, own_step, takes_L, stochastic, blockwise and
// not_in_paper. A name the table lacks gets an entry with no rules.
export function algorithm(cat, name) {
  return ((cat && cat.algorithms) || []).find((a) => a.name === name) || { name, stepsizes: [] };
}

// problemEntry is a problem's entry in the catalogue (own_steps, averages,
// …): GET /api/scenarios lists the problems, the start page's embedded
// catalogue groups them. A problem the catalogue lacks (a run opened from
// outside) has none of its rules.
export function problemEntry(cat, name) {
  const all = ((cat && cat.problems) || []).concat(...((cat && cat.groups) || []).map((g) => g.problems || []));
  return all.find((p) => p.name === name) || { name };
}

const orList = (xs) => (xs.length <= 1 ? xs.join('') : `${xs.slice(0, -1).join(', ')} or ${xs[xs.length - 1]}`);

// stepsizeChoices are the step-size rules the rows offer: every rule some
// algorithm of the table takes, the default first, then in the table's
// order; a rule that fewer than half the algorithms take names them.
export function stepsizeChoices(cat, first) {
  const all = (cat && cat.algorithms) || [];
  const rules = [];
  for (const a of all) for (const r of a.stepsizes || []) if (!rules.includes(r)) rules.push(r);
  if (rules.includes(first)) rules.sort((x, y) => (y === first) - (x === first));
  return rules.map((r) => {
    const takers = all.filter((a) => (a.stepsizes || []).includes(r)).map((a) => a.name);
    return { value: r, text: takers.length * 2 < all.length ? `${r} (${takers.join(', ')})` : r };
  });
}

// specRule returns the stepsize and L fields a spec gives an algorithm row:
// none of a rule an algorithm cannot choose (a single rule, or no L), which
// the server rejects but for the defaults.
export function specRule(a, cat) {
  const e = algorithm(cat, a.algo);
  const o = {};
  if ((e.stepsizes || []).length > 1) o.stepsize = a.stepsize;
  if (e.takes_L) o.L = a.L;
  return o;
}

// algoText is an algorithm's name as the form's menu shows it: a baseline
// that is not a method of the paper says so (the catalogue's not_in_paper).
export function algoText(name, cat) {
  return algorithm(cat, name).not_in_paper ? `${name} (baseline, not in the paper)` : name;
}

// uses says which controls of an algorithm row apply to an algorithm:
// {stepsize, L, schedule, r}. An algorithm with its own step (own_step)
// shows neither stepsize nor L, nor does any algorithm on a problem that
// sets every method's step (the catalogue's own_steps: the structural SVMs).
export function uses(algo, stochastic, problem, cat) {
  const e = algorithm(cat, algo);
  const rule = !e.own_step && !problemEntry(cat, problem).own_steps;
  return {
    stepsize: rule && (e.stepsizes || []).length > 0,
    L: rule && !!e.takes_L,
    schedule: !!stochastic,
    r: !!e.blockwise,
  };
}

// checkAlgo checks an algorithm row; blocks (the instance's q from its
// preview), when known, bounds r as the server does.
export function checkAlgo(a, stochastic, blocks, use, cat) {
  use = use || { stepsize: true, L: true };
  const errs = {};
  const e = algorithm(cat, a.algo);
  if (use.stepsize && !(e.stepsizes || []).includes(a.stepsize)) {
    const takers = ((cat && cat.algorithms) || []).filter((b) => (b.stepsizes || []).includes(a.stepsize)).map((b) => b.name);
    errs.stepsize = takers.length
      ? `${q(a.stepsize)} is a rule of ${takers.join(', ')} only (use ${orList(e.stepsizes)})`
      : `must be ${orList(e.stepsizes)}, got ${q(a.stepsize)}`;
  }
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
