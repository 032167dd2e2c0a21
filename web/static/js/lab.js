// The lab notebook's logic that needs no page: specs flattened and
// compared side by side, sweep cells placed on their axes, outcomes and
// their medians, colour scales, sweep values parsed from the start page,
// sizes in words. No DOM access; tested in the browser harness.

// flatten turns a run spec into (path, value) pairs in the sweep
// vocabulary: top-level fields by name, params.NAME, algorithms[i].FIELD.
export function flatten(spec) {
  const out = {};
  const put = (k, v) => {
    if (v === undefined) return;
    out[k] = v !== null && typeof v === 'object' ? JSON.stringify(v) : v;
  };
  for (const [k, v] of Object.entries(spec || {})) {
    if (k === 'params' && v && typeof v === 'object') {
      for (const [pk, pv] of Object.entries(v)) put('params.' + pk, pv);
    } else if (k === 'algorithms' && Array.isArray(v)) {
      v.forEach((a, i) => {
        for (const [ak, av] of Object.entries(a || {})) put(`algorithms[${i}].${ak}`, av);
      });
    } else put(k, v);
  }
  return out;
}

// pathOrder sorts spec paths: problem first, then the run's fields,
// params, and the algorithms in their order.
function pathRank(p) {
  if (p === 'problem') return [0, 0, p];
  if (p.startsWith('params.')) return [2, 0, p];
  const m = /^algorithms\[(\d+)\]\.(.*)$/.exec(p);
  if (m) return [3, +m[1], m[2] === 'algo' ? '' : m[2]];
  return [1, 0, p];
}
export function pathOrder(a, b) {
  const x = pathRank(a), y = pathRank(b);
  for (let i = 0; i < 3; i++) {
    if (x[i] < y[i]) return -1;
    if (x[i] > y[i]) return 1;
  }
  return 0;
}

// specDiff lays the specs side by side: one row per path any of them has,
// its value in each (undefined where a spec lacks it), and whether they
// differ. Numbers compare by value (0.1 and 1e-1 are the same).
export function specDiff(specs) {
  const flat = specs.map(flatten);
  const keys = new Set();
  for (const f of flat) for (const k of Object.keys(f)) keys.add(k);
  return [...keys].sort(pathOrder).map((key) => {
    const values = flat.map((f) => f[key]);
    const norm = values.map((v) => (v === undefined ? '\u0000' : typeof v === 'number' ? String(v) : JSON.stringify(v)));
    return { key, values, differ: norm.some((v) => v !== norm[0]) };
  });
}

// sameInstance tells whether runs were on the same instance: the same
// problem and parameters, the same seed and equal sizes where known.
export function instanceKey(run) {
  const s = run.spec || {};
  const inst = run.instance || run.info || {};
  return JSON.stringify([s.problem, s.params || {}, s.seed ?? null, inst.dim ?? null, inst.samples ?? null]);
}
export function differentInstances(runs) {
  return new Set(runs.map(instanceKey)).size > 1;
}

// median of the finite numbers of xs; null when there are none.
export function median(xs) {
  const v = (xs || []).filter((x) => x != null && Number.isFinite(+x)).map(Number).sort((a, b) => a - b);
  if (!v.length) return null;
  const h = v.length >> 1;
  return v.length & 1 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

// OUTCOMES names a sweep's outcomes.
export const OUTCOMES = {
  final_gap: { title: 'final gap', log: true },
  final_objective: { title: 'final objective', log: false },
  passes_to_gap: { title: 'passes to reach the gap', log: true },
  seconds_to_gap: { title: 'seconds to reach the gap', log: true },
};

// cellOutcome reads a cell's outcome: of one algorithm (per_algo) when
// named and present, else the cell's summary. null: not known (yet), or
// the gap was never reached.
export function cellOutcome(cell, outcome, algo) {
  if (!cell) return null;
  let s = cell.summary || null;
  if (algo && cell.summary && cell.summary.per_algo && cell.summary.per_algo[algo]) s = cell.summary.per_algo[algo];
  const v = s ? s[outcome] : null;
  return v == null || !Number.isFinite(+v) ? null : +v;
}

// algosOf lists the algorithms a sweep's cells report per algorithm.
export function algosOf(sweep) {
  const seen = new Set();
  for (const c of (sweep && sweep.cells) || []) if (c.summary && c.summary.per_algo) for (const a of Object.keys(c.summary.per_algo)) seen.add(a);
  return [...seen];
}

const same = (a, b) => a === b || (typeof a === 'number' && typeof b === 'number' && Math.abs(a - b) <= 1e-12 * Math.max(1, Math.abs(a), Math.abs(b))) || String(a) === String(b);

// sweepGrid places each cell at its axes' values: for one axis a row of
// n slots, for two axes rows × columns (rows: the second axis, columns:
// the first). Each slot holds {cell, value} (cell null when the sweep has
// none there). Cells whose values are off the axes are returned in stray.
export function sweepGrid(sweep, outcome, algo) {
  const axes = ((sweep && sweep.axes) || []).slice(0, 2);
  const ax0 = axes[0] || { param: '', values: [] };
  const ax1 = axes[1] || null;
  const rows = ax1 ? ax1.values.length : 1;
  const cols = ax0.values.length;
  const grid = Array.from({ length: rows }, () => Array.from({ length: cols }, () => ({ cell: null, value: null })));
  const stray = [];
  for (const c of (sweep && sweep.cells) || []) {
    const vals = c.values || {};
    const i = ax0.values.findIndex((v) => same(v, vals[ax0.param]));
    const j = ax1 ? ax1.values.findIndex((v) => same(v, vals[ax1.param])) : 0;
    if (i < 0 || j < 0) {
      stray.push(c);
      continue;
    }
    grid[j][i] = { cell: c, value: cellOutcome(c, outcome, algo) };
  }
  return { axes, rows, cols, grid, stray };
}

// range of the values of a grid (positive ones only on a log scale).
export function gridRange(grid, log) {
  let lo = Infinity, hi = -Infinity;
  for (const row of grid) for (const s of row) {
    const v = s.value;
    if (v == null || (log && !(v > 0))) continue;
    lo = Math.min(lo, v);
    hi = Math.max(hi, v);
  }
  return lo <= hi ? { lo, hi } : null;
}

// VIRIDIS: a perceptually even colour ramp (low = dark purple, high =
// yellow), as stops of 0…1.
const VIRIDIS = [
  [68, 1, 84],
  [72, 40, 120],
  [62, 74, 137],
  [49, 104, 142],
  [38, 130, 142],
  [31, 158, 137],
  [53, 183, 121],
  [109, 205, 89],
  [180, 222, 44],
  [253, 231, 37],
];

// shade maps v within range to [0, 1] (log scale when log); null when v
// cannot be placed.
export function shade(v, range, log) {
  if (v == null || !range || (log && !(v > 0))) return null;
  const f = (x) => (log ? Math.log10(x) : x);
  const a = f(range.lo), b = f(range.hi);
  if (!(b > a)) return 0.5;
  return Math.min(1, Math.max(0, (f(v) - a) / (b - a)));
}

// colour of a shade t in [0, 1]; grey for null.
export function colour(t) {
  if (t == null) return '#d9dde2';
  const x = t * (VIRIDIS.length - 1);
  const i = Math.min(VIRIDIS.length - 2, Math.floor(x));
  const f = x - i;
  const c = VIRIDIS[i].map((v, k) => Math.round(v + f * (VIRIDIS[i + 1][k] - v)));
  return '#' + c.map((v) => v.toString(16).padStart(2, '0')).join('');
}

// ink is a readable text colour on a background shade.
export function ink(t) {
  return t != null && t < 0.55 ? '#fff' : '#111';
}

// parseValues reads a sweep axis' values as typed: numbers separated by
// commas or spaces; an integer parameter takes integers only; text (names)
// as written, bool true or false, L numbers or auto. Returns
// {values} or {error} naming the offending entry.
export function parseValues(text, kind) {
  const parts = String(text || '').split(/[\s,;]+/).filter((s) => s !== '');
  if (!parts.length) return { error: 'give at least one value' };
  const values = [];
  for (const p of parts) {
    if (kind === 'text' || kind === 'string') {
      values.push(p);
      continue;
    }
    if (kind === 'bool') {
      if (!/^(true|false)$/i.test(p)) return { error: `"${p.slice(0, 20)}" is not true or false` };
      values.push(p.toLowerCase() === 'true');
      continue;
    }
    if (kind === 'L' && p.toLowerCase() === 'auto') {
      values.push('auto');
      continue;
    }
    const v = Number(p);
    if (!Number.isFinite(v)) return { error: `"${p.slice(0, 20)}" is not a number` };
    if (kind === 'int' && !Number.isInteger(v)) return { error: `"${p.slice(0, 20)}" is not an integer` };
    values.push(v);
  }
  if (new Set(values.map(String)).size !== values.length) return { error: 'a value is given twice' };
  return { values };
}

// sweepBody builds the POST /api/sweeps body from a base spec and one or
// two axes ({param, values}); axes without a param are left out.
export function sweepBody(base, axes) {
  const spec = JSON.parse(JSON.stringify(base));
  delete spec.start_paused;
  return { base: spec, axes: axes.filter((a) => a && a.param).map((a) => ({ param: a.param, values: a.values })) };
}

// fmtBytes writes a size in bytes in words (KB, MB, GB: powers of 1024).
export function fmtBytes(n) {
  if (n == null || !Number.isFinite(+n)) return '';
  n = +n;
  const units = ['bytes', 'KB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return i === 0 ? `${n} bytes` : `${n < 10 ? n.toFixed(1) : Math.round(n)} ${units[i]}`;
}

// keyParams is the one-line summary of a run's key parameters for a
// history row: its params, then replications, iters, seed.
export function keyParams(row) {
  const p = row.params || {};
  const bits = [];
  for (const [k, v] of Object.entries(p)) {
    if (['replications', 'iters', 'seed'].includes(k)) continue;
    bits.push(`${k}=${typeof v === 'object' ? JSON.stringify(v) : v}`);
  }
  for (const k of ['replications', 'iters', 'seed']) if (p[k] != null) bits.push(`${k}=${p[k]}`);
  return bits.join(' ');
}

// finals summarises a row's final objective and gap per algorithm (the
// median over its replications).
export function finals(row) {
  const by = new Map();
  for (const f of row.final || []) {
    if (!by.has(f.algo)) by.set(f.algo, { algo: f.algo, obj: [], gap: [] });
    const e = by.get(f.algo);
    e.obj.push(f.objective);
    e.gap.push(f.gap);
  }
  return [...by.values()].map((e) => ({ algo: e.algo, objective: median(e.obj), gap: median(e.gap), n: e.obj.length }));
}
