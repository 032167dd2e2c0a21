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

// sliceData gathers, for one axis, every replication's outcome at each of
// the axis' values (all other axes free) and their median.
export function sliceData(axis, rows, key) {
  return axis.values.map((v) => {
    const ys = rows.filter((r) => sameValue((r.values || {})[axis.param], v)).map((r) => r[key]).filter((y) => y != null && Number.isFinite(y));
    return { v, ys, median: median(ys) };
  });
}

// parallelPlot draws the parallel coordinates; labels name the axes in
// words; link(cell) gives a cell's run URL (or null).
export function parallelPlot({ axes, labels, cells, outcomeOf, log, title, width, link }) {
  const { scales, oscale, lines } = parallelLines(axes, cells, outcomeOf, log);
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
  return { node: root, lines: lines.length, axes: n };
}

// slicePlot draws the outcome against one axis: a dot per replication
// (spread sideways a little), the line through the medians.
export function slicePlot({ axis, label, rows, key, log, title, width }) {
  const data = sliceData(axis, rows, key);
  const sc = axisScale(axis.values);
  const all = data.flatMap((d) => d.ys);
  const osc = outcomeScale(all, log);
  const W = Math.max(260, Math.min(520, width || 400)), H = 240;
  const L = 64, R = 16, T = 24, B = 46;
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
  let dots = 0;
  const med = [];
  data.forEach((d) => {
    const t = sc.pos(d.v);
    if (t == null || !osc) return;
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
  return { node: root, dots, medians: med.length };
}
