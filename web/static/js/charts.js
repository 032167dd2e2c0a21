// The run page's charts: uPlot setup, scales (log-y kept from the first
// point to a reload), zoom shared on x only, reset that resumes following
// the stream, decimation, bands, smoothing, the objective's offset, and the
// hover readout that replaces uPlot's per-chart legend (the page has one
// legend).

import { $, el, fwlab } from './util.js';
import { Decimator, merge, ema, bestSeen } from './decimate.js';
import { fmtNum, fmtCell, alpha, metric, extraOrder } from './format.js';
import { drawEvents, markProbe, laneSpace } from './events.js';
import { padRange, logTicks } from './ranges.js';

const BASE_CHARTS = ['objective', 'gap', 'active', 'batch', 'gamma', 'grad_err'];
// Series with about one value per iteration that jumps about: drawn as
// points (the decimator keeps each bucket's minimum and maximum, so the
// points form a min–max envelope per pixel column).
const DENSE = new Set(['gamma']);
const XLABEL = { k: 'iteration k', passes: 'effective passes', time_s: 'seconds' };
const HEIGHT = 220;
// Grid lines: the labelled ticks' a little stronger than a log axis's
// minor lines (2…9 × 10^k, or the decades left unlabelled).
const GRID = { stroke: 'rgba(0,0,0,0.10)', width: 1 };
const MINOR = { stroke: 'rgba(0,0,0,0.045)', width: 1 };
// Css pixels per label on an axis.
const LABEL_SPACE = { x: 70, y: 34 };
const TICKS = { stroke: 'rgba(0,0,0,0.25)', width: 1, size: 5 };

export function createCharts(S) {
  const charts = [];
  // A group of replications is drawn as its median, with its min–max band
  // unless the page turned bands off (S.bands === false).
  const banded = (g) => g.band && S.bands !== false;
  // Groups hidden from the legend (a click hides, shift-click isolates).
  S.hidden = S.hidden || new Set();
  const shown = () => S.groups.filter((g) => !S.hidden.has(g.key));
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
    zoomBar(box);
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
    S.xext = runExtent();
    for (const C of charts) draw(C);
    legendMarks();
  }

  // runExtent is the x range of every shown trace's records: the window
  // each chart shows while it follows the run, so that every chart spans
  // the whole run, whichever of its values are missing. A group of
  // replications counts each of its traces, not its median: the furthest
  // trace stays in view however far the others lag.
  function runExtent() {
    let lo = Infinity, hi = -Infinity;
    const ok = (v) => v === v && (!S.logx || v > 0);
    for (const g of shown()) {
      for (const t of g.traces) {
        const xcol = t && t.cols[S.xaxis];
        if (!xcol) continue;
        for (let i = 0; i < t.n; i++)
          if (ok(xcol[i])) {
            lo = Math.min(lo, xcol[i]);
            break;
          }
        for (let i = t.n - 1; i >= 0; i--)
          if (ok(xcol[i])) {
            hi = Math.max(hi, xcol[i]);
            break;
          }
      }
    }
    return lo <= hi ? [lo, hi] : null;
  }

  function draw(C) {
    const st = fwlab.charts[C.def.id];
    st.points = chartPoints(C);
    st.logY = C.logY;
    const sub = offset(C);
    const smooth = S.smooth > 0;
    const series = [];
    let width = 0;
    for (const g of shown()) {
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
    const layout = shown().map((g) => g.key + (banded(g) ? '+band' : '')).join(',') + `|${S.xaxis}|${S.logx}|${C.logY}|${smooth}|${S.showDrops}${S.showAways}`;
    // The scales are functions of the page's state (xRange, yRange): the
    // data is always set with its scales reset, and the user's zoom, when
    // there is one, is what xRange returns.
    if (!C.u || C.layout !== layout) {
      if (C.u) C.u.destroy();
      C.u = new uPlot(options(C, series), data, C.body);
      C.layout = layout;
      bindPointer(C);
    } else {
      C.u.setData(data, true);
    }
    C.zoomed = !!S.zoom;
    st.groups = series.map((s) => s.g.key);
    // Points each group has drawn in this chart.
    st.drawnBy = Object.fromEntries(series.map((s) => [s.g.key, s.cols[0].filter((v) => v != null).length]));
    C.card.dataset.groups = st.groups.join(',');
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
    // presenting, the axes' type grows with the rest of the page
    const big = document.body.classList.contains('presenting');
    C.big = big;
    const font = big ? '20px system-ui, sans-serif' : '12px system-ui, sans-serif';
    C.body.dataset.font = font;
    return {
      width,
      height: height(C),
      series: sers,
      bands,
      legend: { show: false },
      // Room above the plot for the event lanes.
      padding: [laneSpace(S.groups.length, S), null, null, null],
      scales: {
        x: { time: false, distr: S.logx ? 3 : 1, log: 10, range: (u, lo, hi) => xRange(lo, hi) },
        y: { distr: C.logY ? 3 : 1, log: 10, range: (u, lo, hi) => padRange(lo, hi, C.logY) },
      },
      axes: [
        axis('x', S.logx, { label: XLABEL[S.xaxis], size: big ? 64 : 40, labelSize: big ? 30 : 18, font, labelFont: big ? 'bold 22px system-ui, sans-serif' : 'bold 12px system-ui, sans-serif' }),
        axis('y', C.logY, { size: big ? 110 : 60, font }),
        ...(S.logx ? [minorAxis('x', 2)] : []),
        ...(C.logY ? [minorAxis('y', 3)] : []),
      ],
      cursor: {
        // The cursor moves on every chart; zoom and reset are shared by
        // this module (x only), never uPlot's own sync of the selection.
        sync: { key: 'fwlab-' + S.runId, scales: ['x', null], filters: { pub: (type) => type === 'mousemove' || type === 'mouseleave' || type === 'mouseenter' } },
        dataIdx: (u, si, idx) => nearest(u.data[si], idx),
        // A box drawn with the mouse selects an x window; this module
        // applies it (userZoom), never uPlot on its own.
        drag: { x: true, y: false, setScale: false },
        bind: { dblclick: () => null },
      },
      hooks: {
        setSelect: [(u) => onSelect(C, u)],
        setScale: [(u, key) => showRange(C, u, key)],
        draw: [(u) => drawEvents(C, u, S)],
        setCursor: [(u) => readout(C, u)],
      },
    };
  }

  // height: the teaching view's presentation mode shows the objective
  // chart alone, 62 % of the window's height.
  function height(C) {
    if (C.def.id === 'objective' && document.body.classList.contains('presenting')) return Math.max(HEIGHT, Math.round(innerHeight * 0.62));
    return HEIGHT;
  }

  // axis is a chart's x or y axis; a log axis is labelled at decades
  // (logTicks), its tick labels never uPlot's (which print 1e-5 as "0").
  function axis(key, log, o) {
    const a = { ...o, values: (u, splits) => splits.map(fmtNum), grid: GRID, ticks: TICKS };
    if (log) Object.assign(a, { splits: (u, ai, lo, hi) => logTicks(lo, hi, labels(u, key)).major, filter: (u, splits) => splits });
    return a;
  }

  // minorAxis draws a log axis's minor grid lines, without labels.
  function minorAxis(key, side) {
    return {
      scale: key,
      side,
      size: 0,
      gap: 0,
      labelSize: 0,
      splits: (u, ai, lo, hi) => logTicks(lo, hi, labels(u, key)).minor,
      values: (u, splits) => splits.map(() => ''),
      filter: (u, splits) => splits,
      grid: MINOR,
      ticks: { show: false },
    };
  }

  // labels is how many labels fit along a chart's axis.
  function labels(u, key) {
    const px = key === 'x' ? u.bbox.width : u.bbox.height;
    const big = document.body.classList.contains('presenting') ? 1.7 : 1; // larger type, fewer labels
    return Math.max(2, Math.floor(px / (devicePixelRatio || 1) / (LABEL_SPACE[key] * big)));
  }

  // xRange: the user's zoom where there is one, else the whole run.
  function xRange(lo, hi) {
    if (S.zoom) return [S.zoom.min, S.zoom.max];
    const e = S.xext;
    if (e) return e[1] > e[0] ? [e[0], e[1]] : S.logx ? [e[0] / 2, e[0] * 2] : [e[0] - 1, e[1] + 1];
    if (lo != null && hi != null && hi > lo) return [lo, hi];
    return S.logx ? [1, 10] : [0, 1];
  }

  // showRange writes a chart's visible ranges on its card, for tests and
  // tools: data-x-range="min,max" and data-y-range="min,max".
  function showRange(C, u, key) {
    const sc = u.scales[key];
    if (!sc || sc.min == null || sc.max == null) return;
    C.card.dataset[key === 'x' ? 'xRange' : 'yRange'] = `${sc.min},${sc.max}`;
  }

  // bindPointer marks a chart's selection as the user's only while the
  // user's pointer made it: from a press on the plot to the release.
  function bindPointer(C) {
    const over = C.u.over;
    over.addEventListener('mousedown', (ev) => {
      if (ev.button === 0) C.userDrag = true;
    });
    over.addEventListener('dblclick', () => resetZoom());
  }

  // onSelect: the box the user drew on a chart zooms every chart's x to it
  // (each chart's y is then fitted to its data in that window).
  function onSelect(C, u) {
    if (!C.userDrag) return;
    C.userDrag = false;
    const sel = u.select;
    if (!(sel.width >= 2)) return;
    const a = u.posToVal(sel.left, 'x'), b = u.posToVal(sel.left + sel.width, 'x');
    u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
    if (a === a && b === b && b > a) userZoom(a, b);
  }

  // userZoom sets the window every chart shows, until a reset.
  function userZoom(min, max) {
    S.zoom = { min, max };
    fwlab.zoom = S.zoom;
    fwlab.zooms = (fwlab.zooms || 0) + 1;
    for (const D of charts) {
      D.zoomed = true;
      if (D.u) D.u.setScale('x', { min, max });
    }
    zoomBar();
  }

  // resetZoom restores every chart and resumes following the stream.
  function resetZoom() {
    const was = !!S.zoom;
    S.zoom = null;
    fwlab.zoom = null;
    for (const C of charts) {
      C.zoomed = false;
      if (C.u) C.u.setData(C.u.data, true);
    }
    zoomBar();
    if (was) fwlab.resets = (fwlab.resets || 0) + 1;
  }

  // zoomBar shows the zoomed window above the charts with a reset button
  // (created once in the chart container's parent).
  let bar = null;
  function zoomBar(box) {
    if (!bar && box) {
      const text = el('span', { class: 'zoom-text' });
      const btn = el('button', { type: 'button', class: 'small', id: 'zoom-reset', text: 'Reset zoom', title: 'Show the whole run and follow it again (Esc, r or a double click)' });
      btn.addEventListener('click', () => resetZoom());
      bar = el('div', { class: 'zoom-bar', id: 'zoom-bar', role: 'status', hidden: '' }, text, ' ', btn);
      bar._text = text;
      box.before(bar);
      document.addEventListener('keydown', (ev) => {
        if (ev.key === 'Escape' && S.zoom && !ev.defaultPrevented) resetZoom();
      });
    }
    if (!bar) return;
    bar.hidden = !S.zoom;
    if (S.zoom) bar._text.textContent = `zoomed to ${XLABEL[S.xaxis]} ${fmtNum(S.zoom.min)} – ${fmtNum(S.zoom.max)}; every chart's y fits this window`;
  }

  // legendMarks marks the legend's entries of hidden groups; a click on an
  // entry hides or shows its group, a shift-click shows it alone (again:
  // shows every group).
  let legendBound = false;
  function legendMarks() {
    const box = $('#legend-algos');
    if (!box) return;
    if (!legendBound) {
      legendBound = true;
      const act = (ev) => {
        const item = ev.target.closest('[data-group]');
        if (!item) return;
        toggleGroup(item.dataset.group, ev.shiftKey);
      };
      box.addEventListener('click', act);
      box.addEventListener('keydown', (ev) => {
        if (ev.key === 'Enter' || ev.key === ' ') {
          ev.preventDefault();
          act(ev);
        }
      });
    }
    for (const item of box.querySelectorAll('[data-group]')) {
      const off = S.hidden.has(item.dataset.group);
      item.classList.add('toggle');
      item.classList.toggle('off', off);
      item.setAttribute('role', 'button');
      item.setAttribute('tabindex', '0');
      item.setAttribute('aria-pressed', String(!off));
      item.title = off ? 'hidden: click to show (shift-click: show it alone)' : 'click to hide (shift-click: show it alone)';
    }
    fwlab.hidden = [...S.hidden];
  }

  function toggleGroup(key, isolate) {
    const keys = S.groups.map((g) => g.key);
    if (isolate) {
      const alone = keys.every((k) => (k === key) !== S.hidden.has(k));
      S.hidden = new Set(alone ? [] : keys.filter((k) => k !== key));
    } else if (S.hidden.has(key)) S.hidden.delete(key);
    else S.hidden.add(key);
    drawAll();
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
    // entering or leaving presentation mode changes the charts' type:
    // they are built again
    const big = document.body.classList.contains('presenting');
    if (charts.some((C) => C.u && C.big !== big)) {
      relayout();
      drawAll();
      return;
    }
    for (const C of charts) if (C.u) C.u.setSize({ width: Math.max(300, C.body.clientWidth), height: height(C) });
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
      zoomed: !!S.zoom,
      xRange: C.card.dataset.xRange || '',
      yRange: C.card.dataset.yRange || '',
      groups: C.card.dataset.groups || '',
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

  return { build, drawAll, draw, charts, chartScale, resetZoom, userZoom, toggleGroup, resize, relayout, setObjectiveTitle, markProbe: (id) => markProbe(charts.find((c) => c.def.id === id) || {}) };
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
// resize is the page's own, never a user's zoom.
export function resizeWithWindow(charts, S) {
  let timer = null;
  window.addEventListener('resize', () => {
    clearTimeout(timer);
    timer = setTimeout(() => charts.resize(), 100);
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
    charts.resetZoom();
    charts.relayout();
    draw();
  });
  on('#logx', 'change', (ev) => {
    S.logx = ev.target.checked;
    charts.resetZoom();
    charts.relayout();
    draw();
  });
  on('#objmode', 'change', (ev) => {
    S.objmode = ev.target.value;
    if (ev.isTrusted) S.objChosen = true;
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
