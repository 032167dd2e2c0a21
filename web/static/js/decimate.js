// Decimation and the other transformations of a series before it is drawn:
// pure functions, no DOM access.

// Decimator keeps, per bucket of consecutive records, the minimum and the
// maximum (so spikes stay visible), with buckets that start small (every
// one of the first records is kept, which log-x needs) and double in size
// whenever there are more than `target` of them. Feeding is incremental.
// Buckets hold raw values; an offset (F* or the best F seen) and the log
// axis's rule (only positive values) apply when the points are read, so a
// moving offset never forces a re-feed.
export class Decimator {
  constructor(target) {
    this.target = target || 1000;
    this.reset(1);
  }
  reset(s) {
    this.s = s;
    this.n = 0;
    this.b = [];
    this.open = null;
  }
  cap(start) {
    return Math.min(this.s, Math.max(1, start >> 4));
  }
  // feed takes records [n, upto) of a source {v, lo, hi}: the value, lower
  // and upper columns (Float64Array, NaN = missing; lo and hi may be v).
  feed(src, upto) {
    const { v, lo, hi } = src;
    for (let i = this.n; i < upto; i++) {
      let o = this.open;
      if (!o)
        o = this.open = { start: i, count: 0, iMin: -1, vMin: Infinity, iMax: -1, vMax: -Infinity, iPos: -1, vPos: Infinity, lo: Infinity, hi: -Infinity, loPos: Infinity };
      const x = v ? v[i] : NaN;
      if (x === x) {
        if (x < o.vMin) (o.vMin = x), (o.iMin = i);
        if (x > o.vMax) (o.vMax = x), (o.iMax = i);
        if (x > 0 && x < o.vPos) (o.vPos = x), (o.iPos = i);
        let l = lo ? lo[i] : x, h = hi ? hi[i] : x;
        if (!(l === l)) l = x;
        if (!(h === h)) h = x;
        if (l < o.lo) o.lo = l;
        if (l > 0 && l < o.loPos) o.loPos = l;
        if (h > o.hi) o.hi = h;
      }
      if (++o.count >= this.cap(o.start)) {
        if (o.iMin >= 0) this.b.push(o);
        this.open = null;
      }
    }
    this.n = Math.max(this.n, upto);
    if (this.b.length > this.target) {
      this.reset(this.s * 2);
      this.feed(src, upto);
    }
  }
  // points calls fn(i, y, lo, hi) in index order, with y = value − sub;
  // on a log axis (log true) only positive values are given.
  points(fn, sub, log) {
    sub = sub || 0;
    const emit = (o) => {
      if (o.iMin < 0) return;
      let iMin = o.iMin, vMin = o.vMin - sub, lo = o.lo - sub;
      const iMax = o.iMax, vMax = o.vMax - sub, hi = o.hi - sub;
      if (log) {
        if (!(vMax > 0)) return;
        if (!(vMin > 0)) {
          // The smallest positive value, when the offset is 0.
          if (sub === 0 && o.iPos >= 0) (iMin = o.iPos), (vMin = o.vPos);
          else (iMin = iMax), (vMin = vMax);
        }
        if (!(lo > 0)) lo = sub === 0 && o.loPos < Infinity ? o.loPos : vMin;
      }
      if (iMin === iMax) fn(iMin, vMin, lo, hi);
      else if (iMin < iMax) fn(iMin, vMin, lo, hi), fn(iMax, vMax, lo, hi);
      else fn(iMax, vMax, lo, hi), fn(iMin, vMin, lo, hi);
    };
    for (const o of this.b) emit(o);
    if (this.open) emit(this.open);
  }
}

// merge aligns several sorted (x, values…) series on one x array, as uPlot
// wants: a row per distinct x (a repeated x in one series starts a new row).
export function merge(series, width) {
  const heads = series.map(() => 0);
  const xs = [];
  const cols = [];
  for (let j = 0; j < width; j++) cols.push([]);
  for (;;) {
    let best = Infinity;
    for (let s = 0; s < series.length; s++) if (heads[s] < series[s].x.length && series[s].x[heads[s]] < best) best = series[s].x[heads[s]];
    if (best === Infinity) break;
    xs.push(best);
    for (const c of cols) c.push(null);
    const row = xs.length - 1;
    for (let s = 0; s < series.length; s++) {
      const S = series[s];
      if (heads[s] < S.x.length && S.x[heads[s]] === best) {
        for (let j = 0; j < S.cols.length; j++) cols[S.at + j][row] = S.cols[j][heads[s]];
        heads[s]++;
      }
    }
  }
  return [xs, ...cols];
}

// ema smooths a series with an exponential moving average of weight w in
// [0, 1) (0: no smoothing), debiased at the start as TensorBoard does, in
// log space when log is true; missing values (null) stay missing and do not
// move the average.
export function ema(ys, w, log) {
  const out = new Array(ys.length).fill(null);
  let acc = 0, norm = 0;
  for (let i = 0; i < ys.length; i++) {
    const y = ys[i];
    if (y == null || !(log ? y > 0 : isFinite(y))) continue;
    const v = log ? Math.log(y) : y;
    acc = w * acc + (1 - w) * v;
    norm = w * norm + (1 - w);
    const m = acc / norm;
    out[i] = log ? Math.exp(m) : m;
  }
  return out;
}

// bestSeen returns the smallest finite value of the first n entries of
// each column (Infinity when there is none).
export function bestSeen(cols, n) {
  let best = Infinity;
  cols.forEach((c, j) => {
    if (!c) return;
    const m = Array.isArray(n) ? n[j] : n;
    for (let i = 0; i < m; i++) if (c[i] < best) best = c[i];
  });
  return best;
}

// binEvents groups event positions (pixels, any order) into bins of width
// px: it returns {dense, bins: Map(bin → count), marks: positions kept},
// dense when some bin holds more than one event, in which case the events
// are to be drawn as a density strip rather than one mark each.
export function binEvents(xs, px) {
  const bins = new Map();
  let dense = false;
  for (const x of xs) {
    const b = Math.floor(x / px);
    const c = (bins.get(b) || 0) + 1;
    bins.set(b, c);
    if (c > 1) dense = true;
  }
  return { dense, bins, max: Math.max(0, ...bins.values()) };
}
