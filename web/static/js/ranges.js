// The charts' ranges and ticks: the y range fitted to the visible data
// (log axes too), the x extent of a run, and log axes labelled by decades
// with a minor grid that stays readable. Pure functions, no DOM access
// (tested in the browser harness).

import { niceTicks } from './schedule.js';

// padRange pads [lo, hi] (the data's extremes in the visible window) so
// that the lines do not sit on the plot's edges: 5% of the span on a
// linear axis, 5% of the decades on a log axis. A single value gets room
// around it; no data gives a default range. On a log axis only positive
// values count: lo ≤ 0 is not a range a log axis can show.
export function padRange(lo, hi, log) {
  const ok = (v) => v != null && Number.isFinite(v) && (!log || v > 0);
  if (!ok(lo) && !ok(hi)) return log ? [1, 10] : [0, 1];
  if (!ok(lo)) lo = hi;
  if (!ok(hi)) hi = lo;
  if (lo > hi) [lo, hi] = [hi, lo];
  if (log) {
    const a = Math.log10(lo), b = Math.log10(hi);
    const pad = b > a ? 0.05 * (b - a) : 0.25;
    return [Math.pow(10, a - pad), Math.pow(10, b + pad)];
  }
  if (hi > lo) {
    const pad = 0.05 * (hi - lo);
    // A range that starts at zero (counts, sizes) keeps zero as its floor.
    return [lo >= 0 && lo - pad < 0 ? 0 : lo - pad, hi + pad];
  }
  const pad = Math.abs(lo) * 0.1 || 1;
  return [lo - pad, hi + pad];
}

// extent is the smallest and largest finite value of the columns (of
// positive values only when log); null when there is none.
export function extent(cols, log) {
  let lo = Infinity, hi = -Infinity;
  for (const c of cols) {
    if (!c) continue;
    for (const v of c) {
      if (v == null || !Number.isFinite(v) || (log && !(v > 0))) continue;
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
  }
  return lo <= hi ? [lo, hi] : null;
}

// windowExtent is extent restricted to the rows whose x lies in [x0, x1]:
// the values a chart shows in a zoomed window.
export function windowExtent(xs, cols, x0, x1, log) {
  let lo = Infinity, hi = -Infinity;
  for (let i = 0; i < xs.length; i++) {
    const x = xs[i];
    if (!(x >= x0 && x <= x1)) continue;
    for (const c of cols) {
      const v = c[i];
      if (v == null || !Number.isFinite(v) || (log && !(v > 0))) continue;
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
  }
  return lo <= hi ? [lo, hi] : null;
}

// p10 is 10^e, exact for negative e too (Math.pow(10, -5) is not 1e-5).
const p10 = (e) => (e >= 0 ? Math.pow(10, e) : 1 / Math.pow(10, -e));
const mp10 = (m, e) => (e >= 0 ? m * Math.pow(10, e) : m / Math.pow(10, -e));
const near = (a, b) => Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b));
const inside = (v, lo, hi) => (v > lo || near(v, lo)) && (v < hi || near(v, hi));

// logTicks chooses a log axis's ticks over [lo, hi] (lo > 0) for at most
// maxLabels labels: major ticks (labelled, with a grid line) at decades,
// every step-th decade when there are too many; minor ticks (a lighter
// grid line, no label) at 2…9 × 10^e when a decade has room for them, at
// the unlabelled decades otherwise. A range narrower than two decades is
// labelled at 1, 2, 5 × 10^e, then at every 1…9 × 10^e, then on a linear
// scale, so that an axis always carries at least two labels.
export function logTicks(lo, hi, maxLabels) {
  maxLabels = Math.max(2, Math.floor(maxLabels || 6));
  if (!(lo > 0) || !(hi > lo)) return { major: [], minor: [] };
  const e0 = Math.floor(Math.log10(lo) + 1e-9), e1 = Math.ceil(Math.log10(hi) - 1e-9);
  const decades = [];
  for (let e = e0; e <= e1; e++) if (inside(p10(e), lo, hi)) decades.push(e);
  if (decades.length >= 2) {
    const step = Math.ceil(decades.length / maxLabels);
    const major = [], minor = [];
    for (const e of decades) (((e % step) + step) % step === 0 ? major : minor).push(p10(e));
    // One decade per label: 2…9 × 10^e are the minor lines, while the
    // axis spans few enough decades for 8 lines a decade to be seen apart.
    if (step === 1 && decades.length <= 6) {
      for (let e = e0; e <= e1; e++) for (let m = 2; m <= 9; m++) if (inside(mp10(m, e), lo, hi)) minor.push(mp10(m, e));
    }
    return { major, minor: minor.sort((a, b) => a - b) };
  }
  const all = [];
  for (let e = e0 - 1; e <= e1; e++) for (let m = 1; m <= 9; m++) if (inside(mp10(m, e), lo, hi)) all.push({ v: mp10(m, e), m });
  let major = all.filter((t) => t.m === 1 || t.m === 2 || t.m === 5);
  if (major.length < 2 || major.length > maxLabels) major = all;
  if (major.length >= 2 && major.length <= maxLabels) {
    const set = new Set(major);
    return { major: major.map((t) => t.v), minor: all.filter((t) => !set.has(t)).map((t) => t.v) };
  }
  if (major.length > maxLabels) {
    // Within about a decade but too many labels: every other one.
    const step = Math.ceil(major.length / maxLabels);
    return { major: major.filter((_, i) => i % step === 0).map((t) => t.v), minor: major.filter((_, i) => i % step !== 0).map((t) => t.v) };
  }
  // Narrower than 1…9 × 10^e apart: linear ticks.
  return { major: niceTicks(lo, hi, Math.min(maxLabels, 4)), minor: [] };
}
