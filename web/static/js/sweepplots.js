// A sweep's study plots: parallel coordinates (every axis and the outcome
// as vertical axes, one line per cell, coloured by the outcome) and a
// slice per axis (the outcome against the axis' value, a dot per
// replication, the line through the medians). Axes may hold numbers,
// strings or booleans: a numeric axis is placed linearly (or on a log
// scale over two decades or more), any other as evenly spaced categories.
// The scales are pure functions (tested in the browser harness); the
// drawings return SVG elements.

import { fmtNum, fmtCell } from './format.js';
import { shade, colour, median } from './lab.js';

const SVG = 'http://www.w3.org/2000/svg';

function svg(tag, attrs, ...kids) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v != null) e.setAttribute(k, v);
  for (const c of kids) if (c != null) e.append(c);
  return e;
}

// valueText writes an axis value: numbers as tick labels, anything else
// (strings, booleans) as its text.
export function valueText(v) {
  if (typeof v === 'number') return fmtNum(v);
  if (v == null) return '—';
  return String(v);
}

const sameValue = (a, b) => a === b || String(a) === String(b);

// axisScale places an axis' values on [0, 1]: {kind: 'linear' | 'log' |
// 'category', pos(v) (null for a value off the axis), ticks: [{v, t,
// label}]}.
export function axisScale(values) {
  const vals = values || [];
  const numeric = vals.length > 0 && vals.every((v) => typeof v === 'number' && Number.isFinite(v));
  if (!numeric || vals.length < 2) {
    const n = vals.length;
    const at = (i) => (n <= 1 ? 0.5 : i / (n - 1));
    return {
      kind: 'category',
      pos: (v) => {
        const i = vals.findIndex((x) => sameValue(x, v));
        return i < 0 ? null : at(i);
      },
      ticks: vals.map((v, i) => ({ v, t: at(i), label: valueText(v) })),
    };
  }
  const lo = Math.min(...vals), hi = Math.max(...vals);
  const log = lo > 0 && hi / lo >= 100;
  const f = (x) => (log ? Math.log10(x) : x);
  const a = f(lo), b = f(hi);
  const pos = (v) => (typeof v !== 'number' || !Number.isFinite(v) || (log && !(v > 0)) ? null : b > a ? (f(v) - a) / (b - a) : 0.5);
  return { kind: log ? 'log' : 'linear', pos, ticks: vals.map((v) => ({ v, t: pos(v), label: valueText(v) })) };
}

// outcomeScale places outcome values (numbers, null for none) on [0, 1],
// log when asked and every value is positive.
export function outcomeScale(values, log) {
  const vs = values.filter((v) => v != null && Number.isFinite(v) && (!log || v > 0));
  if (!vs.length) return null;
  const range = { lo: Math.min(...vs), hi: Math.max(...vs) };
  return { range, log, pos: (v) => shade(v, range, log) };
}

// parallelLines turns cells into the polylines of a parallel-coordinates
// plot: for each cell, its position on every axis and on the outcome
// (last), and its outcome; cells whose values fall off an axis are left
// out.
export function parallelLines(axes, cells, outcomeOf, log) {
  const scales = axes.map((a) => axisScale(a.values));
  const lines = [];
  for (const c of cells) {
    const t = axes.map((a, k) => scales[k].pos((c.values || {})[a.param]));
    if (t.some((x) => x == null)) continue;
    lines.push({ cell: c, t, value: outcomeOf(c), out: null });
  }
  // the outcome's scale spans the cells drawn
  const oscale = outcomeScale(lines.map((l) => l.value), log);
  for (const l of lines) l.out = oscale && l.value != null ? oscale.pos(l.value) : null;
  return { scales, oscale, lines };
}

// reachedMedian is the median of n replications' times to the gap of
// which ys reached it (the others never did: +∞): null unless the middle
// replication reached it (both middle ones for an even n: 2 of 3, 4 of 6),
// the rule the server's summaries follow (sweep.Summarize).
export function reachedMedian(ys, n) {
  if (!n || ys.length * 2 < n) return null;
  const v = ys.filter((y) => Number.isFinite(y)).sort((a, b) => a - b);
  while (v.length < n) v.push(Infinity);
  const m = Math.floor(n / 2);
  const med = n % 2 === 1 ? v[m] : (v[m - 1] + v[m]) / 2;
  return Number.isFinite(med) ? med : null;
}

// sliceData gathers, for one axis, every replication's outcome at each of
// the axis' values (all other axes free) and their median. For a time to
// the gap, a replication that never reached it is censored (kept in
// censored, at where it ended when known) and counts against the median:
// {v, ys, censored, n, reached, median}.
export function sliceData(axis, rows, key) {
  const toGap = key.endsWith('_to_gap');
  return axis.values.map((v) => {
    // (a row with replication null is a cell that made no trace)
    const at = rows.filter((r) => sameValue((r.values || {})[axis.param], v) && r.replication !== null);
    const ys = at.map((r) => r[key]).filter((y) => y != null && Number.isFinite(y));
    if (!toGap) return { v, ys, censored: [], n: ys.length, reached: ys.length, median: median(ys) };
    const censored = at.filter((r) => r.reached === false).map((r) => (key === 'passes_to_gap' && r.passes_at_end != null ? r.passes_at_end : null));
    const n = ys.length + censored.length;
    return { v, ys, censored, n, reached: ys.length, median: reachedMedian(ys, n) };
  });
}

// importance is each axis' share of the outcome's variance over the cells
// (the main effect, η² of a one-way analysis of variance: the variance of
// the outcome's means per axis value over the total variance), on log10
// of the outcome when log. Cells without a value are left out (counted in
// left). An axis that does not matter has a share near 0; with no spread
// at all every share is null. {method, n, left, shares: [{param, share}]}.
export function importance(axes, cells, outcomeOf, log) {
  const pts = [];
  let left = 0;
  for (const c of cells) {
    const v = outcomeOf(c);
    const vals = c.values || {};
    if (v == null || !Number.isFinite(v) || (log && !(v > 0)) || axes.some((a) => !(a.param in vals))) {
      left++;
      continue;
    }
    pts.push({ vals, y: log ? Math.log10(v) : v });
  }
  const n = pts.length;
  const mean = n ? pts.reduce((s, p) => s + p.y, 0) / n : 0;
  const total = pts.reduce((s, p) => s + (p.y - mean) ** 2, 0);
  const shares = axes.map((a) => {
    if (n < 2 || !(total > 1e-300 * n)) return { param: a.param, share: null };
    const groups = new Map();
    for (const p of pts) {
      const k = JSON.stringify(p.vals[a.param]);
      const g = groups.get(k) || { s: 0, n: 0 };
      g.s += p.y;
      g.n++;
      groups.set(k, g);
    }
    let between = 0;
    for (const g of groups.values()) between += g.n * (g.s / g.n - mean) ** 2;
    return { param: a.param, share: Math.min(1, Math.max(0, between / total)) };
  });
  return { method: 'main-effect variance share (η², one-way ANOVA per axis)', n, left, shares };
}

// importancePlot lists the axes with a bar for each one's share.
export function importancePlot({ axes, labels, cells, outcomeOf, log, title }) {
  const imp = importance(axes, cells, outcomeOf, log);
  const root = document.createElement('div');
  root.className = 'sweep-importance';
  root.id = 'sweep-importance';
  const head = document.createElement('p');
  head.className = 'small';
  head.textContent = `Parameter importance for ${title}${log ? ' (log)' : ''}: ${imp.method}, over ${imp.n} cell${imp.n === 1 ? '' : 's'}` + (imp.left ? ` (${imp.left} without a value left out)` : '') + '.';
  root.append(head);
  imp.shares.forEach((s, k) => {
    const row = document.createElement('div');
    row.className = 'imp-row';
    row.dataset.param = s.param;
    row.dataset.share = s.share == null ? '' : String(s.share);
    const name = document.createElement('span');
    name.className = 'imp-name';
    name.textContent = labels[k] || s.param;
    const bar = document.createElement('span');
    bar.className = 'imp-bar';
    bar.style.display = 'inline-block';
    bar.style.height = '10px';
    bar.style.background = '#0072B2';
    bar.style.width = `${Math.round(200 * (s.share || 0))}px`;
    const val = document.createElement('span');
    val.className = 'imp-val mono small';
    val.textContent = s.share == null ? ' no spread to explain' : ` ${fmtCell(100 * s.share, 2)} %`;
    row.append(name, ' ', bar, val);
    root.append(row);
  });
  return { node: root, importance: imp };
}

// brushed says which lines every brush keeps: a brush is a range [lo, hi]
// of an axis' position (0 … 1; the outcome's axis is the last); a line
// without a position on a brushed axis is not kept.
export function brushed(lines, brushes) {
  return lines.map((l) =>
    Object.entries(brushes || {}).every(([k, b]) => {
      const t = Number(k) < l.t.length ? l.t[Number(k)] : l.out;
      return t != null && t >= b[0] - 1e-9 && t <= b[1] + 1e-9;
    })
  );
}

// parallelPlot draws the parallel coordinates; labels name the axes in
// words; link(cell) gives a cell's run URL (or null). Dragging along an
// axis brushes it: only the lines inside every brush stay strong; a click
// on an axis without a drag clears its brush. brushes (an object of axis
// index → [lo, hi]) keeps the brushes across redraws; onBrush is told the
// lines kept.
export function parallelPlot({ axes, labels, cells, outcomeOf, log, title, width, link, brushes, onBrush }) {
  const { scales, oscale, lines } = parallelLines(axes, cells, outcomeOf, log);
  brushes = brushes || {};
  const W = Math.max(360, Math.min(1100, width || 800)), H = 320;
  const n = axes.length + 1;
  // room for the first and last axes' titles (about 7 px a character)
  const firstTitle = labels[0] || (axes[0] && axes[0].param) || '';
  const lastTitle = title + (log ? ' (log)' : '');
  const L = Math.max(60, firstTitle.length * 3.6 + 10), R = Math.max(80, lastTitle.length * 3.6 + 10), T = 36, B = 40;
  const xAt = (k) => L + (k * (W - L - R)) / (n - 1);
  const yAt = (t) => T + (1 - t) * (H - T - B);
  const root = svg('svg', { id: 'sweep-parallel-svg', class: 'sweep-parallel', width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': `parallel coordinates of ${labels.join(', ')} against ${title}` });
  root.append(svg('rect', { x: 0, y: 0, width: W, height: H, fill: '#fff' }));
  // the lines first, the axes over them
  for (const ln of lines) {
    const pts = ln.t.map((t, k) => [xAt(k), yAt(t)]);
    const missing = ln.out == null;
    pts.push([xAt(n - 1), missing ? H - B + 14 : yAt(ln.out)]);
    const pl = svg('polyline', { points: pts.map((p) => p.map((x) => x.toFixed(1)).join(',')).join(' '), fill: 'none', stroke: missing ? '#999' : colour(ln.out), 'stroke-width': 2, 'stroke-dasharray': missing ? '4 3' : null, 'stroke-opacity': 0.85, class: 'pc-line', 'data-value': ln.value == null ? '' : String(ln.value) }, svg('title', {}, axes.map((a, k) => `${labels[k]} = ${valueText((ln.cell.values || {})[a.param])}`).join(', ') + ` · ${title}: ${ln.value == null ? 'none' : fmtCell(ln.value, 4)}`));
    const href = link && link(ln.cell);
    root.append(href ? svg('a', { href }, pl) : pl);
  }
  const axisLine = (k, label, ticks) => {
    const x = xAt(k);
    root.append(svg('line', { x1: x, y1: T, x2: x, y2: H - B, stroke: '#333', 'stroke-width': 1, class: 'pc-axis' }));
    root.append(svg('text', { x, y: T - 14, 'text-anchor': 'middle', 'font-size': 12, 'font-weight': 600 }, label));
    for (const tk of ticks) {
      if (tk.t == null) continue;
      const y = yAt(tk.t);
      root.append(svg('line', { x1: x - 4, y1: y, x2: x, y2: y, stroke: '#333' }));
      root.append(svg('text', { x: x - 6, y: y + 4, 'text-anchor': 'end', 'font-size': 11, 'paint-order': 'stroke', stroke: '#fff', 'stroke-width': 3 }, tk.label));
    }
  };
  axes.forEach((a, k) => axisLine(k, labels[k] || a.param, scales[k].ticks));
  const oticks = oscale ? [{ t: 0, label: fmtCell(oscale.range.lo, 3) }, { t: 1, label: fmtCell(oscale.range.hi, 3) }] : [];
  axisLine(n - 1, title + (log ? ' (log)' : ''), oticks);
  root.append(svg('text', { x: xAt(n - 1) + 8, y: H - B + 18, 'font-size': 10, fill: '#666' }, 'none'));
  // brushing
  const polys = Array.from(root.querySelectorAll('polyline.pc-line'));
  const marks = [];
  const apply = () => {
    const keep = brushed(lines, brushes);
    keep.forEach((k, i) => {
      polys[i].classList.toggle('pc-dim', !k);
      polys[i].setAttribute('stroke-opacity', k ? 0.85 : 0.08);
    });
    for (const m of marks) m.remove();
    marks.length = 0;
    for (const [k, b] of Object.entries(brushes)) {
      const x = xAt(Number(k));
      const r = svg('rect', { x: x - 7, y: yAt(b[1]), width: 14, height: Math.max(2, yAt(b[0]) - yAt(b[1])), fill: '#0072B2', 'fill-opacity': 0.18, stroke: '#0072B2', class: 'pc-brush', 'data-axis': k, 'pointer-events': 'none' });
      root.append(r);
      marks.push(r);
    }
    const kept = keep.filter(Boolean).length;
    root.dataset.kept = String(kept);
    if (onBrush) onBrush(kept, keep);
  };
  const tAt = (ev) => {
    const box = root.getBoundingClientRect();
    const y = ((ev.clientY - box.top) * H) / (box.height || H);
    return Math.min(1, Math.max(0, 1 - (y - T) / (H - T - B)));
  };
  for (let k = 0; k < n; k++) {
    const area = svg('rect', { x: xAt(k) - 12, y: T - 4, width: 24, height: H - T - B + 8, fill: 'transparent', class: 'pc-brush-area', 'data-axis': k, style: 'cursor: ns-resize' }, svg('title', {}, 'drag along the axis to keep only the lines in a range; click to clear'));
    let from = null, moved = false;
    area.addEventListener('pointerdown', (ev) => {
      from = tAt(ev);
      moved = false;
      area.setPointerCapture && area.setPointerCapture(ev.pointerId);
      ev.preventDefault();
    });
    area.addEventListener('pointermove', (ev) => {
      if (from == null) return;
      const to = tAt(ev);
      if (Math.abs(to - from) < 0.01) return;
      moved = true;
      brushes[k] = [Math.min(from, to), Math.max(from, to)];
      apply();
    });
    area.addEventListener('pointerup', () => {
      if (from != null && !moved) delete brushes[k];
      from = null;
      apply();
    });
    root.append(area);
  }
  apply();
  return { node: root, lines: lines.length, axes: n, kept: brushed(lines, brushes).filter(Boolean).length };
}

// slicePlot draws the outcome against one axis: a dot per replication
// (spread sideways a little), an open triangle per replication that never
// reached the gap (censored), "k of n" reached under each value, the line
// through the medians where there is one.
export function slicePlot({ axis, label, rows, key, log, title, width }) {
  const data = sliceData(axis, rows, key);
  const sc = axisScale(axis.values);
  const all = data.flatMap((d) => d.ys.concat(d.censored.filter((y) => y != null)));
  const osc = outcomeScale(all, log);
  const W = Math.max(260, Math.min(520, width || 400)), H = 240;
  const L = 64, R = 16, T = 24, B = 58;
  const xAt = (t) => L + 14 + t * (W - L - R - 28);
  const yAt = (t) => T + (1 - t) * (H - T - B);
  const root = svg('svg', { class: 'sweep-slice', width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': `${title} against ${label}`, 'data-param': axis.param });
  root.append(svg('rect', { x: L, y: T, width: W - L - R, height: H - T - B, fill: '#fff', stroke: '#ccd' }));
  root.append(svg('text', { x: L + (W - L - R) / 2, y: H - 8, 'text-anchor': 'middle', 'font-size': 12 }, label + (sc.kind === 'log' ? ' (log)' : '')));
  root.append(svg('text', { x: 12, y: T + (H - T - B) / 2, 'font-size': 11, transform: `rotate(-90 12 ${T + (H - T - B) / 2})`, 'text-anchor': 'middle' }, title + (log ? ' (log)' : '')));
  if (osc) {
    root.append(svg('text', { x: L - 4, y: T + 8, 'text-anchor': 'end', 'font-size': 10 }, fmtCell(osc.range.hi, 3)));
    root.append(svg('text', { x: L - 4, y: H - B, 'text-anchor': 'end', 'font-size': 10 }, fmtCell(osc.range.lo, 3)));
  }
  for (const tk of sc.ticks) root.append(svg('text', { x: xAt(tk.t), y: H - B + 16, 'text-anchor': 'middle', 'font-size': 11 }, tk.label));
  let dots = 0, censored = 0;
  const med = [];
  const toGap = key.endsWith('_to_gap');
  data.forEach((d) => {
    const t = sc.pos(d.v);
    if (t != null && toGap) {
      root.append(svg('text', { x: xAt(t), y: H - B + 29, 'text-anchor': 'middle', 'font-size': 10, fill: d.reached < d.n ? '#a33' : '#555', class: 'slice-reached', 'data-reached': d.reached, 'data-n': d.n }, `${d.reached} of ${d.n}`));
    }
    if (t == null || !osc) return;
    // never reached: an open triangle pointing up at where the run ended
    // (it would have needed more), or at the top edge when that is unknown
    d.censored.forEach((y, j) => {
      const p = y != null ? osc.pos(y) : 1;
      const cx = xAt(t) + (d.censored.length > 1 ? (j / (d.censored.length - 1) - 0.5) * 10 : 0);
      const cy = yAt(p == null ? 1 : p);
      root.append(svg('path', { d: `M${(cx - 4).toFixed(1)},${(cy + 3).toFixed(1)} L${cx.toFixed(1)},${(cy - 4).toFixed(1)} L${(cx + 4).toFixed(1)},${(cy + 3).toFixed(1)} Z`, fill: 'none', stroke: '#a33', 'stroke-width': 1.5, class: 'slice-censored' }, svg('title', {}, `${label} = ${valueText(d.v)}: not reached` + (y != null ? ` (censored where its run ended, ${fmtCell(y, 4)})` : ''))));
      censored++;
    });
    d.ys.forEach((y, j) => {
      const p = osc.pos(y);
      if (p == null) return;
      const jitter = d.ys.length > 1 ? ((j / (d.ys.length - 1)) - 0.5) * 10 : 0;
      root.append(svg('circle', { cx: (xAt(t) + jitter).toFixed(1), cy: yAt(p).toFixed(1), r: 3, fill: '#0072B2', 'fill-opacity': 0.45, class: 'slice-dot' }, svg('title', {}, `${label} = ${valueText(d.v)}: ${fmtCell(y, 4)}`)));
      dots++;
    });
    const m = d.median != null ? osc.pos(d.median) : null;
    if (m != null) med.push([xAt(t), yAt(m)]);
  });
  if (med.length > 1) root.append(svg('polyline', { points: med.map((p) => p.map((x) => x.toFixed(1)).join(',')).join(' '), fill: 'none', stroke: '#D55E00', 'stroke-width': 2, class: 'slice-median' }));
  for (const p of med) root.append(svg('rect', { x: p[0] - 4, y: p[1] - 4, width: 8, height: 8, fill: '#D55E00', class: 'slice-median-pt' }));
  if (!osc) root.append(svg('text', { x: L + 10, y: T + 20, 'font-size': 12, fill: '#666' }, 'no values yet'));
  return { node: root, dots, censored, medians: med.length, data: data.map((d) => ({ v: d.v, reached: d.reached, n: d.n, median: d.median })) };
}
