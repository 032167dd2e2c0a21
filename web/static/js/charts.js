// The run page's charts: uPlot setup, scales (log-y kept from the first
// point to a reload), zoom shared on x only, reset that resumes following
// the stream, decimation, bands, smoothing, the objective's offset, and the
// hover readout that replaces uPlot's per-chart legend (the page has one
// legend).

import { $, el, fwlab } from './util.js';
import { Decimator, merge, ema, bestSeen } from './decimate.js';
import { fmtNum, fmtCell, alpha, metric, extraOrder } from './format.js';
import { drawEvents, markProbe, laneSpace } from './events.js';

const BASE_CHARTS = ['objective', 'gap', 'active', 'batch', 'gamma', 'grad_err'];
// Series with about one value per iteration that jumps about: drawn as
// points (the decimator keeps each bucket's minimum and maximum, so the
// points form a min–max envelope per pixel column).
const DENSE = new Set(['gamma']);
const XLABEL = { k: 'iteration k', passes: 'effective passes', time_s: 'seconds' };
const HEIGHT = 220;
// Thin grid lines: log axes draw one per 1…9 × 10^k.
const GRID = { stroke: 'rgba(0,0,0,0.07)', width: 1 };
const TICKS = { stroke: 'rgba(0,0,0,0.25)', width: 1, size: 5 };

export function createCharts(S) {
  const charts = [];
  // A group of replications is drawn as its median, with its min–max band
  // unless the page turned bands off (S.bands === false).
  const banded = (g) => g.band && S.bands !== false;
  const extra = {};
  const logKey = (id) => `fwlab.logy.${S.runId}.${id}`;

  function storedLog(id, dflt) {
    try {
      const v = localStorage.getItem(logKey(id));
      if (v === '1') return true;
      if (v === '0') return false;
    } catch (e) {
      /* storage unavailable: the default */
    }
    return dflt;
  }

  function makeChart(def, container) {
    const m = metric(def.col);
    def.title = def.title || m.title;
    def.help = def.help || m.help;
    const card = el('div', { class: 'chart card', 'data-chart': def.id });
    const title = el('h4', { text: def.title });
    const logBox = el('input', { type: 'checkbox' });
    const logY = storedLog(def.id, def.log);
    logBox.checked = logY;
    const png = el('button', { type: 'button', class: 'small', text: 'PNG', 'data-png': def.id, title: 'Download this chart with its title and legend' });
    const head = el('div', { class: 'chart-head' }, title, el('label', { class: 'small' }, logBox, ' log y'), png);
    const help = el('p', { class: 'chart-help muted small', text: def.help });
    const readout = el('div', { class: 'chart-readout small mono', text: '\u00a0' });
    const body = el('div', { class: 'plot' });
    card.append(head, help, body, readout);
    container.append(card);
    const C = { def, card, body, title, help, readout, logBox, logY, u: null, decs: new Map(), layout: '', zoomed: false };
    fwlab.charts[def.id] = { points: 0, drawn: 0, drops: 0, aways: 0, band: false, bandRows: 0, logY, title: def.title };
    logBox.addEventListener('change', () => {
      C.logY = logBox.checked;
      try {
        localStorage.setItem(logKey(def.id), C.logY ? '1' : '0');
      } catch (e) {
        /* not kept across reloads then */
      }
      C.layout = '';
      draw(C);
    });
    charts.push(C);
    return C;
  }

  function build() {
    const box = $('#charts');
    for (const id of BASE_CHARTS) {
      const def = { id, col: id, log: metric(id).log };
      makeChart(def, box);
    }
    setObjectiveTitle();
  }

  function setObjectiveTitle() {
    const C = charts.find((c) => c.def.id === 'objective');
    if (!C) return;
    const t = { raw: 'Objective F(x)', fstar: 'Suboptimality F(x) − F*', best: 'F(x) − best F seen' }[S.objmode];
    const h = {
      raw: 'The exact objective at the evaluated iterates.',
      fstar: 'Distance of the objective from the known optimum F*.',
      best: 'F* is unknown: the objective minus the smallest value any trace has reached so far (that point itself is not drawn on a log axis).',
    }[S.objmode];
    C.def.title = t;
    C.title.textContent = t;
    C.help.textContent = h;
    fwlab.charts.objective.title = t;
  }

  // offset is what the chart subtracts from its values.
  function offset(C) {
    if (C.def.id !== 'objective') return 0;
    if (S.objmode === 'fstar' && S.fstar != null) return S.fstar;
    if (S.objmode === 'best') {
      const best = bestSeen(S.groups.map((g) => (g.band ? g.lo.objective : g.traces[0].cols.objective)), S.groups.map((g) => g.n));
      return best < Infinity ? best : 0;
    }
    return 0;
  }

  function source(C, g) {
    const c = C.def.col;
    const v = g.band ? g.med[c] : g.traces[0].cols[c];
    return { v, lo: banded(g) ? g.lo[c] : v, hi: banded(g) ? g.hi[c] : v };
  }

  function chartPoints(C) {
    let n = 0;
    const key = C.def.extra ? 'extra:' + C.def.col : C.def.col;
    for (const t of S.traces) if (t) n += t.counts[key] || 0;
    return n;
  }

  // addExtraCharts gives each problem metric seen in the records a chart.
  function addExtraCharts() {
    const keys = new Set();
    for (const t of S.traces) if (t) for (const k of Object.keys(t.counts)) if (k.startsWith('extra:')) keys.add(k.slice(6));
    for (const k of [...keys].sort(extraOrder)) {
      if (extra[k]) continue;
      extra[k] = makeChart({ id: 'extra-' + k, col: k, log: metric(k).log, extra: true }, $('#extra-charts'));
    }
  }

  function drawAll() {
    addExtraCharts();
    for (const C of charts) draw(C);
  }

  function draw(C) {
    const st = fwlab.charts[C.def.id];
    st.points = chartPoints(C);
    st.logY = C.logY;
    const sub = offset(C);
    const smooth = S.smooth > 0;
    const series = [];
    let width = 0;
    for (const g of S.groups) {
      let d = C.decs.get(g.key);
      if (!d || d.band !== banded(g)) {
        d = new Decimator(1000);
        d.band = banded(g);
        C.decs.set(g.key, d);
      }
      d.feed(source(C, g), g.n);
      const xcol = g.band ? g.med[S.xaxis] : g.traces[0].cols[S.xaxis];
      const x = [], y = [], lo = [], hi = [];
      d.points(
        (i, v, l, h) => {
          const xv = xcol ? xcol[i] : NaN;
          if (!(xv === xv) || (S.logx && !(xv > 0))) return;
          x.push(xv);
          y.push(v);
          lo.push(l);
          hi.push(h);
        },
        sub,
        C.logY
      );
      const cols = [smooth ? ema(y, S.smooth, C.logY) : y];
      if (smooth) cols.push(y);
      if (banded(g)) cols.push(lo, hi);
      series.push({ x, cols, at: width, g, smooth });
      width += cols.length;
    }
    const data = merge(series, width);
    C.series = series;
    // A chart with nothing it can draw (the sampled-gradient error of a
    // deterministic method) stays hidden until it has.
    const empty = data[0].length === 0;
    if (C.card.hidden !== empty) {
      C.card.hidden = empty;
      C.layout = '';
    }
    st.drawn = data[0].length;
    if (empty) return;
    const layout = S.groups.map((g) => g.key + (banded(g) ? '+band' : '')).join(',') + `|${S.xaxis}|${S.logx}|${C.logY}|${smooth}|${S.showDrops}${S.showAways}`;
    S.internal++;
    try {
      if (!C.u || C.layout !== layout) {
        if (C.u) C.u.destroy();
        C.u = new uPlot(options(C, series), data, C.body);
        C.layout = layout;
        C.zoomed = false;
        C.u.over.addEventListener('dblclick', () => resetZoom());
        if (S.zoom) applyZoom(C, S.zoom);
      } else {
        C.u.setData(data, !C.zoomed);
      }
    } finally {
      S.internal--;
    }
    st.xkey = S.xaxis;
    st.logx = S.logx;
    st.xmax = data[0][data[0].length - 1];
    st.smooth = smooth;
    st.offset = sub;
    st.series = C.u.series.slice(1).map((s) => ({ label: s.label, stroke: typeof s.stroke === 'function' ? s.stroke(C.u, 1) : s.stroke }));
    let bandRows = 0;
    for (const s of series) {
      if (!banded(s.g)) continue;
      const l = s.cols[s.cols.length - 2], h = s.cols[s.cols.length - 1];
      for (let j = 0; j < s.x.length; j++) if (l[j] != null && h[j] != null) bandRows++;
    }
    st.bandRows = bandRows;
    st.band = bandRows > 0 && !!(C.u.bands && C.u.bands.length);
  }

  function options(C, series) {
    const fmt = (u, v) => fmtCell(v);
    const sers = [{ label: XLABEL[S.xaxis], value: fmt }];
    const bands = [];
    const dense = DENSE.has(C.def.col);
    for (const s of series) {
      const g = s.g;
      const main = { label: g.label, stroke: g.color, width: 1.5, spanGaps: true, points: { show: false }, value: fmt };
      if (dense) Object.assign(main, { paths: () => null, points: { show: true, size: 3, width: 0, fill: g.color, stroke: g.color } });
      sers.push(main);
      if (s.smooth) {
        const raw = { label: g.label + ' (raw)', stroke: alpha(g.color, 0.25), width: 1, spanGaps: true, points: { show: false }, value: fmt };
        if (dense) Object.assign(raw, { paths: () => null, points: { show: true, size: 2, width: 0, fill: alpha(g.color, 0.25), stroke: alpha(g.color, 0.25) } });
        sers.push(raw);
      }
      if (banded(g)) {
        const lo = sers.length, hi = sers.length + 1;
        sers.push({ label: 'min', stroke: alpha(g.color, 0.35), width: 0.5, spanGaps: true, points: { show: false }, value: fmt });
        sers.push({ label: 'max', stroke: alpha(g.color, 0.35), width: 0.5, spanGaps: true, points: { show: false }, value: fmt });
        bands.push({ series: [hi, lo], fill: alpha(g.color, 0.18) });
      }
    }
    const width = Math.max(300, C.body.clientWidth || 480);
    return {
      width,
      height: HEIGHT,
      series: sers,
      bands,
      legend: { show: false },
      // Room above the plot for the event lanes.
      padding: [laneSpace(S.groups.length, S), null, null, null],
      scales: {
        x: { time: false, distr: S.logx ? 3 : 1, log: 10 },
        y: { distr: C.logY ? 3 : 1, log: 10 },
      },
      axes: [
        { label: XLABEL[S.xaxis], values: (u, splits) => splits.map(fmtNum), size: 40, labelSize: 18, grid: GRID, ticks: TICKS },
        { values: (u, splits) => splits.map(fmtNum), size: 60, grid: GRID, ticks: TICKS },
      ],
      cursor: {
        // The cursor moves on every chart; zoom and reset are shared by
        // this module (x only), never uPlot's own sync of the selection.
        sync: { key: 'fwlab-' + S.runId, scales: ['x', null], filters: { pub: (type) => type === 'mousemove' || type === 'mouseleave' || type === 'mouseenter' } },
        dataIdx: (u, si, idx) => nearest(u.data[si], idx),
        drag: { x: true, y: true, uni: 20 },
        bind: { dblclick: () => null },
      },
      hooks: {
        setSelect: [
          (u) => {
            if (u.select.width > 0 || u.select.height > 0) C.userAt = performance.now();
          },
        ],
        setScale: [(u, key) => onScale(C, u, key)],
        draw: [(u) => drawEvents(C, u, S)],
        setCursor: [(u) => readout(C, u)],
      },
    };
  }

  // onScale: a scale change not made by this module is the user's zoom.
  // An x zoom is applied to every chart's x; each chart keeps its own y.
  function onScale(C, u, key) {
    // uPlot may apply a scale after the call that asked for it returns, so
    // a change counts as the user's only right after their selection.
    if (S.internal > 0 || !(performance.now() - (C.userAt || 0) < 500)) return;
    C.zoomed = true;
    if (key !== 'x') return;
    S.zoom = { min: u.scales.x.min, max: u.scales.x.max };
    fwlab.zoom = S.zoom;
    S.internal++;
    try {
      for (const D of charts) if (D !== C && D.u) applyZoom(D, S.zoom);
    } finally {
      S.internal--;
    }
  }

  function applyZoom(D, z) {
    const y = D.u.scales.y;
    const ymin = y.min, ymax = y.max;
    D.u.batch(() => {
      D.u.setScale('x', { min: z.min, max: z.max });
      if (ymin != null && ymax != null) D.u.setScale('y', { min: ymin, max: ymax });
    });
    D.zoomed = true;
  }

  // resetZoom restores every chart and resumes following the stream.
  function resetZoom() {
    S.zoom = null;
    fwlab.zoom = null;
    S.internal++;
    try {
      for (const C of charts) {
        C.zoomed = false;
        C.userAt = 0;
        if (C.u) C.u.setData(C.u.data, true);
      }
    } finally {
      S.internal--;
    }
    fwlab.resets = (fwlab.resets || 0) + 1;
  }

  // readout writes the values under the cursor below the chart.
  function readout(C, u) {
    const idx = u.cursor.idx;
    if (idx == null) {
      C.readout.textContent = '\u00a0';
      return;
    }
    const bits = [`${XLABEL[S.xaxis]} ${fmtCell(u.data[0][idx])}`];
    for (const s of C.series || []) {
      const col = u.data[1 + s.at];
      const j = nearest(col, idx);
      if (col && col[j] != null) bits.push(`${s.g.label.split(' (')[0]}: ${fmtCell(col[j], 4)}`);
    }
    C.readout.textContent = bits.join(' · ');
  }

  function resize() {
    for (const C of charts) if (C.u) C.u.setSize({ width: Math.max(300, C.body.clientWidth), height: HEIGHT });
  }

  function relayout() {
    for (const C of charts) {
      C.layout = '';
      C.decs.clear();
    }
  }

  // chartScale reports a chart's scales and whether the user zoomed.
  function chartScale(id) {
    const C = charts.find((c) => c.def.id === id);
    if (!C || !C.u) return null;
    const xs = C.u.data[0];
    return {
      zoomed: C.zoomed,
      min: C.u.scales.x.min,
      max: C.u.scales.x.max,
      ymin: C.u.scales.y.min,
      ymax: C.u.scales.y.max,
      dataMax: xs.length ? xs[xs.length - 1] : null,
      dataMin: xs.length ? xs[0] : null,
      draws: S.perf.draws,
      logY: C.logY,
      distr: C.u.scales.y.distr,
      hidden: C.card.hidden,
      title: C.def.title,
    };
  }

  return { build, drawAll, draw, charts, chartScale, resetZoom, resize, relayout, setObjectiveTitle, markProbe: (id) => markProbe(charts.find((c) => c.def.id === id) || {}) };
}

// nearest finds the closest non-null value to idx, so that hovering reads
// every trace even where the merged x rows interleave.
export function nearest(arr, idx) {
  if (!arr || idx == null || arr[idx] != null) return idx;
  for (let d = 1; d < 400; d++) {
    if (idx - d >= 0 && arr[idx - d] != null) return idx - d;
    if (idx + d < arr.length && arr[idx + d] != null) return idx + d;
  }
  return idx;
}

// resizeWithWindow resizes the charts when the window's size settles; the
// resize is the page's own, not a user's zoom.
export function resizeWithWindow(charts, S) {
  let timer = null;
  window.addEventListener('resize', () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      S.internal++;
      try {
        charts.resize();
      } finally {
        S.internal--;
      }
    }, 100);
  });
}

// bindViewControls wires the chart view controls the run and compare pages
// share (x axis, log x, objective mode, smoothing, drop and away marks, and
// the bands where the page has them) to S; draw redraws the charts.
export function bindViewControls(charts, S, draw) {
  const on = (sel, ev, f) => {
    const e = $(sel);
    if (e) e.addEventListener(ev, f);
  };
  on('#xaxis', 'change', (ev) => {
    S.xaxis = ev.target.value;
    fwlab.xaxis = S.xaxis;
    S.zoom = null;
    charts.relayout();
    draw();
  });
  on('#logx', 'change', (ev) => {
    S.logx = ev.target.checked;
    S.zoom = null;
    charts.relayout();
    draw();
  });
  on('#objmode', 'change', (ev) => {
    S.objmode = ev.target.value;
    charts.setObjectiveTitle();
    draw();
  });
  on('#bands', 'change', (ev) => {
    S.bands = ev.target.checked;
    draw();
  });
  on('#smooth', 'input', (ev) => {
    S.smooth = +ev.target.value;
    $('#smooth-val').textContent = S.smooth > 0 ? S.smooth.toFixed(2) : 'off';
    draw();
  });
  on('#show-drops', 'change', (ev) => {
    S.showDrops = ev.target.checked;
    draw();
  });
  on('#show-aways', 'change', (ev) => {
    S.showAways = ev.target.checked;
    draw();
  });
}
