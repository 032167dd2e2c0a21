// The run's records in columns: one Trace per (algorithm, replication),
// one Group per algorithm row (its replications as a median with a min–max
// envelope). No DOM access.

export const BASE = ['k', 'passes', 'time_s', 'gamma', 'batch', 'active', 'objective', 'gap', 'grad_err'];
// Extra keys that belong to the teaching view, not to charts.
export const TEACH = /^(x0|x1|fw_x0|fw_x1|away_x0|away_x1|from_x0|from_x1|at_x0|at_x1|w:.*)$/;

// MAX_EXTRA_KEYS bounds the problem-specific metrics a page keeps in
// columns (and so the charts built from them): a stored run with thousands
// of extra keys must not freeze the page. The keys beyond it are counted in
// extraCap.dropped and left out.
export const MAX_EXTRA_KEYS = 64;
export const extraCap = { keys: new Set(), dropped: new Set() };

// admitExtra reports whether the extra key k gets a column on this page.
function admitExtra(k) {
  if (extraCap.keys.has(k)) return true;
  if (extraCap.keys.size < MAX_EXTRA_KEYS) {
    extraCap.keys.add(k);
    return true;
  }
  if (extraCap.dropped.size < 100000) extraCap.dropped.add(k);
  return false;
}

// teachPart returns the teaching view's keys of a record's extra.
export function teachPart(e) {
  const p = {};
  for (const k in e) if (TEACH.test(k)) p[k] = e[k];
  return p;
}

// Trace holds every record of one (algorithm, replication) in columns.
export class Trace {
  constructor(meta, keepExtra) {
    this.meta = meta;
    this.n = 0;
    this.cap = 1024;
    this.cols = {};
    for (const c of BASE) this.cols[c] = new Float64Array(this.cap);
    this.step = [];
    this.drops = []; // record indices of drop events
    this.aways = []; // record indices of away steps
    this.counts = {};
    this.keepExtra = keepExtra;
    this.extras = keepExtra ? [] : null;
    this.hasXY = false; // the records carry the 2-D iterate (teaching view)
    this.plane = null; // the teaching view's keys of the last record that carried them
    this.wkeys = new Set(); // the vertices that ever held weight
    this.last = {};
  }
  col(name) {
    let c = this.cols[name];
    if (!c) {
      c = this.cols[name] = new Float64Array(this.cap).fill(NaN);
    }
    return c;
  }
  grow() {
    this.cap *= 2;
    for (const [k, c] of Object.entries(this.cols)) {
      const d = new Float64Array(this.cap).fill(NaN);
      d.set(c.subarray(0, this.n));
      this.cols[k] = d;
    }
  }
  // keepExtras makes a trace that was made without the teaching view's
  // metrics keep them from now on; the records it holds get theirs from
  // fillExtra (the complete trace, fetched again).
  keepExtras() {
    if (this.extras) return;
    this.keepExtra = true;
    this.extras = new Array(this.n).fill(null);
    this.fillPlane = null;
  }
  // fillExtra gives record i, held without its metrics, those of r (the
  // same record, read again); records come in order, as push takes them.
  fillExtra(i, r) {
    if (!this.extras || i >= this.n) return;
    let e = r.extra || null;
    if (this.fillPlane && (!e || e.x0 == null)) e = e ? { ...this.fillPlane, ...e } : this.fillPlane;
    if (r.extra && r.extra.x0 != null) this.fillPlane = teachPart(r.extra);
    if (this.extras[i] == null && e) {
      this.extras[i] = e;
      if (e.x0 != null) this.hasXY = true;
      for (const k in e) if (k.charCodeAt(0) === 119 && k.startsWith('w:')) this.wkeys.add(k);
    }
    if (i === this.n - 1 && !this.plane) this.plane = this.fillPlane;
  }
  push(r) {
    if (this.n === this.cap) this.grow();
    const i = this.n;
    for (const c of BASE) {
      const v = r[c];
      const x = v == null ? NaN : +v;
      this.cols[c][i] = x;
      if (x === x) this.counts[c] = (this.counts[c] || 0) + 1;
    }
    this.step.push(r.step);
    if (r.step === 'drop' || r.drops > 0) this.drops.push(i);
    if (r.step === 'away' || r.away_steps > 0) this.aways.push(i);
    if (r.extra) {
      for (const [k, v] of Object.entries(r.extra)) {
        if (TEACH.test(k) || !admitExtra(k)) continue;
        this.col(k)[i] = v == null ? NaN : +v;
        this.counts['extra:' + k] = (this.counts['extra:' + k] || 0) + 1;
      }
    }
    if (this.extras) {
      let e = r.extra || null;
      // A record of a 2-D run whose points equal those of the last record
      // that carried them leaves them out: it shows that record's.
      if (this.plane && (!e || e.x0 == null)) e = e ? { ...this.plane, ...e } : this.plane;
      this.extras.push(e);
      if (r.extra && r.extra.x0 != null) this.plane = teachPart(r.extra);
      if (e) {
        if (e.x0 != null) this.hasXY = true;
        for (const k in e) if (k.charCodeAt(0) === 119 && k.startsWith('w:')) this.wkeys.add(k);
      }
    }
    if (r.objective != null) this.last.objective = r.objective;
    if (r.gap != null) this.last.gap = r.gap;
    this.last.rec = r;
    this.n++;
  }
}

// Group is one algorithm row: its replications as a median with a min–max
// envelope (a single replication reads its trace directly).
// specRow returns the spec's algorithm row that trace tm ran and whether
// its name needs a number to tell it from another row of the same name. A
// run's traces are made algorithm by algorithm, replication by replication
// (scenarios.Jobs), so trace t ran row floor(t / replications); a trace's
// algo is its name (the algorithm, and a variant's departure from the
// paper: "bc-ssfw-as + slack collapse"). ord is the trace's position among
// the traces of its name and replication, the row among the rows of the
// same name when the traces do not follow that order (a bundle written
// otherwise).
export function specRow(spec, traces, tm, ord) {
  const algos = (spec && spec.algorithms) || [];
  const reps = (spec && spec.replications) || 1;
  const same = traces.filter((x) => x.algo === tm.algo && x.replication === tm.replication).length;
  const row = algos.length * reps === traces.length ? algos[Math.floor(tm.trace / reps)] : algos.filter((a) => a.algo === tm.algo)[ord];
  return { row, numbered: same > 1 };
}

export class Group {
  constructor(key, label, color) {
    this.key = key;
    this.label = label;
    this.color = color;
    this.traces = [];
    this.n = 0;
    this.med = {};
    this.lo = {};
    this.hi = {};
    this.cap = 0;
  }
  get band() {
    return this.traces.length > 1;
  }
  columns() {
    const s = new Set();
    for (const t of this.traces) for (const k of Object.keys(t.cols)) s.add(k);
    return [...s];
  }
  // update computes the rows every replication has reached (or all rows
  // once the replications are finished).
  update(finished) {
    if (!this.band) {
      this.n = this.traces[0].n;
      return;
    }
    let limit = Infinity, maxN = 0;
    for (const t of this.traces) {
      maxN = Math.max(maxN, t.n);
      if (!finished(t)) limit = Math.min(limit, t.n);
    }
    limit = Math.min(limit, maxN);
    if (limit <= this.n) return;
    const cols = this.columns();
    if (limit > this.cap) {
      let cap = Math.max(1024, this.cap);
      while (cap < limit) cap *= 2;
      for (const c of cols) for (const m of [this.med, this.lo, this.hi]) {
        const d = new Float64Array(cap).fill(NaN);
        if (m[c]) d.set(m[c].subarray(0, this.n));
        m[c] = d;
      }
      this.cap = cap;
    }
    for (const c of cols) for (const m of [this.med, this.lo, this.hi]) if (!m[c]) m[c] = new Float64Array(this.cap).fill(NaN);
    const buf = [];
    for (let i = this.n; i < limit; i++) {
      for (const c of cols) {
        buf.length = 0;
        for (const t of this.traces) {
          if (i < t.n && t.cols[c]) {
            const v = t.cols[c][i];
            if (v === v) buf.push(v);
          }
        }
        if (!buf.length) continue;
        buf.sort((a, b) => a - b);
        const h = buf.length >> 1;
        this.med[c][i] = buf.length & 1 ? buf[h] : 0.5 * (buf[h - 1] + buf[h]);
        this.lo[c][i] = buf[0];
        this.hi[c][i] = buf[buf.length - 1];
      }
    }
    this.n = limit;
  }
  val(c, i) {
    if (!this.band) {
      const col = this.traces[0].cols[c];
      return col ? col[i] : NaN;
    }
    return this.med[c] ? this.med[c][i] : NaN;
  }
  low(c, i) {
    return this.band ? (this.lo[c] ? this.lo[c][i] : NaN) : this.val(c, i);
  }
  high(c, i) {
    return this.band ? (this.hi[c] ? this.hi[c][i] : NaN) : this.val(c, i);
  }
}
