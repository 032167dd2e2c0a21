// A sweep's page: a heat map (two axes) or a line (one axis) of a chosen
// outcome (final gap or objective, passes or seconds to reach a gap), the
// median over each cell's replications, each cell linking to its run; a
// parallel-coordinates plot and a slice per axis (sweepplots.js); its
// name, note and star; its cells as CSV and JSON. It follows the sweep
// (GET /api/sweeps/{id}) until every cell has ended. The first outcome
// shown is the server's default_outcome (passes to the gap the base spec
// states, else the final gap). Axes are labelled in words (the server's
// labels) and may hold strings and booleans.

import { $, el, api, fwlab } from './util.js';
import { fmtCell } from './format.js';
import { OUTCOMES, sweepGrid, gridRange, shade, colour, ink, algosOf, cellOutcome } from './lab.js';
import { initSweepVerify } from './verify.js';
import { valueText, parallelPlot, slicePlot, importancePlot } from './sweepplots.js';
import { silenceText } from './progress.js';

const fmtNum = valueText;

const SVG = 'http://www.w3.org/2000/svg';
const LIVE = new Set(['queued', 'running', 'paused']);

function svg(tag, attrs, ...kids) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v != null) e.setAttribute(k, v);
  for (const c of kids) if (c != null) e.append(c);
  return e;
}

export function initSweep() {
  const page = $('#sweep-page');
  const id = page.dataset.sweepId;
  const S = { sweep: null, outcome: null, algo: '', log: true, gap: '', timer: 0, polls: 0, rows: [], rowsKey: '' };
  fwlab.sweep = { id, polls: 0, status: '', cells: [], drawn: 0, kind: '', outcome: '', parallel: null, slices: [] };
  initSweepVerify(id);
  const showError = (msg) => {
    const p = $('#sweep-error');
    p.textContent = msg || '';
    p.hidden = !msg;
  };

  async function poll() {
    clearTimeout(S.timer);
    const q = S.gap ? '?gap=' + encodeURIComponent(S.gap) : '';
    let res;
    try {
      res = await api('GET', `/api/sweeps/${encodeURIComponent(id)}${q}`);
    } catch (e) {
      showError(`could not reach the server: ${e.message}`);
      S.timer = setTimeout(poll, 3000);
      return;
    }
    S.polls++;
    fwlab.sweep.polls = S.polls;
    if (!res.ok || !res.data) {
      showError(`sweep ${id}: ${(res.data && res.data.field ? res.data.field + ': ' : '') + ((res.data && res.data.error) || 'not found')} (status ${res.status})`);
      page.dataset.status = res.status === 404 ? 'missing' : 'error';
      if (res.status >= 500) S.timer = setTimeout(poll, 3000);
      return;
    }
    showError('');
    S.sweep = res.data;
    if (S.outcome == null) {
      // the gap the base spec states is the target the outcome starts with
      if (res.data.base && res.data.base.gap > 0 && !$('#gap-target').value) $('#gap-target').value = String(res.data.base.gap);
      S.outcome = OUTCOMES[res.data.default_outcome] ? res.data.default_outcome : 'final_gap';
      $('#outcome').value = S.outcome;
      $('#sweep-log').checked = S.log = OUTCOMES[S.outcome].log;
    }
    await loadRows();
    draw();
    if (LIVE.has(S.sweep.status) || (S.sweep.cells || []).some((c) => LIVE.has(c.status))) S.timer = setTimeout(poll, 1000);
  }

  // loadRows fetches every replication's outcome (the cells export) when
  // the cells that ended, or the gap target, changed.
  async function loadRows() {
    const sw = S.sweep;
    const key = (sw.cells || []).map((c) => c.status).join(',') + '|' + S.gap;
    if (key === S.rowsKey) return;
    try {
      const q = S.gap ? '&gap=' + encodeURIComponent(S.gap) : '';
      const res = await api('GET', `/api/sweeps/${encodeURIComponent(id)}/cells?format=json${q}`);
      if (res.ok && res.data) {
        S.rows = res.data.rows || [];
        S.rowsKey = key;
        fwlab.sweep.rowsGap = res.data.gap_target;
      }
    } catch (e) {
      /* the slices wait for the next poll */
    }
  }

  function header(sw) {
    $('#sweep-name').textContent = sw.name || 'Sweep';
    document.title = `${sw.name || 'Sweep ' + id} · fwlab`;
    $('#sweep-note').textContent = sw.note || '';
    const star = $('#sweep-star');
    star.textContent = sw.starred ? '★' : '☆';
    star.classList.toggle('on', !!sw.starred);
    star.setAttribute('aria-pressed', String(!!sw.starred));
    const q = S.gap ? '&gap=' + encodeURIComponent(S.gap) : '';
    $('#sweep-csv').href = `/api/sweeps/${encodeURIComponent(id)}/cells?format=csv${q}`;
    $('#sweep-json').href = `/api/sweeps/${encodeURIComponent(id)}/cells?format=json${q}`;
    $('#sweep-runs').href = '/runs?sweep=' + encodeURIComponent(id);
  }

  const labelOf = (a, i) => (S.sweep && S.sweep.labels && S.sweep.labels[i]) || (a ? a.param : '');

  function draw() {
    const sw = S.sweep;
    header(sw);
    const st = $('#sweep-status');
    st.textContent = sw.status;
    st.className = 'status st-' + sw.status;
    page.dataset.status = sw.status;
    const cells = sw.cells || [];
    const done = cells.filter((c) => !LIVE.has(c.status)).length;
    $('#sweep-progress').textContent = `${done} of ${cells.length} cells ended` + (sw.base && sw.base.problem ? ` · ${sw.base.problem}` : '') + (sw.base && sw.base.replications > 1 ? ` · ${sw.base.replications} replications per cell` : '');
    $('#sweep-cancel').disabled = !LIVE.has(sw.status);
    if (sw.gap_target != null) $('#gap-target').placeholder = `${sw.gap_target} (the sweep's)`;
    const runs = cells.map((c) => c.run).filter(Boolean);
    const cmp = $('#sweep-compare');
    cmp.hidden = runs.length < 2;
    cmp.href = '/compare?runs=' + runs.map(encodeURIComponent).join(',');
    // The algorithm choice: the cells' per-algorithm summaries.
    // each algorithm once, as its traces name it ("ssfw-as + slack
    // collapse"), in the base's order; the base's names until a cell ends
    const baseAlgos = ((sw.base && sw.base.algorithms) || []).map((a) => a.algo);
    const rank = (a) => {
      const i = baseAlgos.findIndex((b) => a === b || a.startsWith(b + ' '));
      return i < 0 ? baseAlgos.length : i;
    };
    const found = algosOf(sw);
    const algos = found.length ? [...found].sort((x, y) => rank(x) - rank(y)) : [...new Set(baseAlgos)];
    const asel = $('#sweep-algo');
    const want = algos.join(',');
    if (asel.dataset.opts !== want) {
      asel.dataset.opts = want;
      asel.replaceChildren(...algos.map((a) => el('option', { value: a, text: rank(a) === 0 ? `${a} (the base's first)` : a })));
      if (!S.algo || !algos.includes(S.algo)) S.algo = algos[0] || '';
      asel.value = S.algo;
    }
    asel.closest('label').hidden = algos.length < 2;
    const info = OUTCOMES[S.outcome];
    const G = sweepGrid(sw, S.outcome, S.algo);
    const log = S.log && info.log !== null;
    const range = honestRange(gridRange(G.grid, log), log);
    const box = $('#sweep-plot');
    if ((sw.axes || []).some((a) => a.range)) {
      // a sampled study: its cells are points, not a grid
      const n = (sw.cells || []).length;
      box.replaceChildren(el('p', { class: 'muted', id: 'sweep-sampled', text: `A sampled study: ${n} points drawn over the axes' ranges (${(sw.axes || []).map((a, i) => `${labelOf(a, i)} ${fmtNum(a.range.min)} … ${fmtNum(a.range.max)}${a.range.log ? ' (log)' : ''}`).join(', ')}). The parallel coordinates and the slices below show every point.` }));
      fwlab.sweep.kind = 'sampled';
    } else if (G.axes.length === 2) {
      box.replaceChildren(heatMap(G, range, log, info));
      fwlab.sweep.kind = 'heatmap';
    } else {
      box.replaceChildren(linePlot(G, range, log, info));
      fwlab.sweep.kind = 'line';
    }
    table(sw, G);
    studyPlots(sw, G, info, log);
    fwlab.sweep.outcome = S.outcome;
    fwlab.sweep.algo = S.algo;
    fwlab.sweep.status = sw.status;
    fwlab.sweep.drawn++;
    fwlab.sweep.cells = cells.map((c) => {
      const s = summaryOf(c);
      return { run: c.run, status: c.status, values: c.values, value: c.run ? cellOutcome(c, S.outcome, S.algo) : null, reached: s ? s.reached : null, replications: s ? s.replications : null };
    });
    fwlab.sweep.range = range;
    fwlab.sweep.gap = sw.gap_target;
  }

  const axisName = (a) => labelOf(a, S.sweep && S.sweep.axes ? S.sweep.axes.indexOf(a) : -1);

  // studyPlots: the parallel coordinates of the axes against the outcome
  // (a line per cell) and a slice per axis (a dot per replication).
  function studyPlots(sw, G, info, log) {
    // a sampled study shows every axis (its cells are points, not a grid)
    const sampled = (sw.axes || []).some((a) => a.range);
    const axes = sampled ? sw.axes : G.axes;
    const labels = axes.map((a, i) => labelOf(a, i));
    const cells = (sw.cells || []).filter((c) => c.summary || !LIVE.has(c.status));
    const outcomeOf = (c) => (sampled ? cellOutcome(c, S.outcome, S.algo) : G.grid.flat().find((s) => s.cell === c)?.value ?? null);
    const width = ($('#sweep-parallel').clientWidth || 800) - 10;
    // the brushes stay while the outcome and algorithm do
    const bkey = S.outcome + '|' + S.algo + '|' + log;
    if (S.brushKey !== bkey) {
      S.brushes = {};
      S.brushKey = bkey;
    }
    const pc = parallelPlot({ axes, labels, cells, outcomeOf, log, title: info.title, width, link: (c) => (linkable(c) ? '/runs/' + encodeURIComponent(c.run) : null), brushes: S.brushes, onBrush: (kept) => fwlab.sweep.parallel && (fwlab.sweep.parallel.kept = kept) });
    const imp = importancePlot({ axes, labels, cells, outcomeOf, log, title: info.title });
    $('#sweep-parallel').replaceChildren(pc.node, imp.node);
    fwlab.sweep.parallel = { lines: pc.lines, axes: pc.axes, kept: pc.kept };
    fwlab.sweep.importance = imp.importance;
    const rows = S.rows.filter((r) => r.algorithm === S.algo);
    const sw0 = ($('#sweep-slices').clientWidth || 800) / Math.min(axes.length, 2) - 16;
    const slices = axes.map((a, i) => slicePlot({ axis: a, label: labels[i], rows, key: S.outcome, log, title: info.title, width: sw0 }));
    $('#sweep-slices').replaceChildren(...slices.map((s) => s.node));
    fwlab.sweep.slices = slices.map((s) => ({ dots: s.dots, censored: s.censored, medians: s.medians, data: s.data }));
  }
  // summaryOf is a cell's summary for the chosen algorithm.
  const summaryOf = (c) => (c && c.summary ? (S.algo && c.summary.per_algo && c.summary.per_algo[S.algo]) || c.summary : null);
  // reachedText says how many replications of a cell reached the gap.
  function reachedText(c) {
    const s = summaryOf(c);
    if (!S.outcome.endsWith('_to_gap') || !s || !s.replications) return '';
    return `reached in ${s.reached} of ${s.replications}`;
  }
  // honestRange widens a colour range that spans less than 10 % of its
  // values (a factor 1.1 on a log scale) to that, so nearly equal cells
  // get nearly equal colours; it says so (widened, span).
  function honestRange(r, log) {
    if (!r) return r;
    if (log) {
      const f = r.hi / r.lo;
      if (!(f < 1.1)) return r;
      const mid = Math.sqrt(r.lo * r.hi), k = Math.sqrt(1.1);
      return { lo: mid / k, hi: mid * k, widened: true, span: f - 1 };
    }
    const big = Math.max(Math.abs(r.lo), Math.abs(r.hi));
    if (!(big > 0) || r.hi - r.lo >= 0.1 * big) return r;
    const mid = (r.lo + r.hi) / 2;
    return { lo: mid - 0.05 * big, hi: mid + 0.05 * big, widened: true, span: (r.hi - r.lo) / big };
  }
  // A cell links to its run unless the run was never made or is deleted.
  const linkable = (c) => !!(c && c.run && c.status !== 'deleted');
  // missing says why a cell has no value.
  function missing(c) {
    if (!c) return '—';
    if (LIVE.has(c.status)) return c.status + '…';
    if (c.status === 'deleted') return 'run deleted';
    if (!c.run) return 'not run';
    if (c.status !== 'done') return c.status;
    return S.outcome.endsWith('_to_gap') ? 'not reached' : 'no value';
  }

  // heatMap: rows are the second axis (top to bottom), columns the first.
  function heatMap(G, range, log, info) {
    const [a0, a1] = G.axes;
    const head = el('tr', {}, el('th', { class: 'corner', text: `${axisName(a1)} ↓ · ${axisName(a0)} →` }), ...a0.values.map((v) => el('th', { class: 'mono', text: fmtNum(v) })));
    const body = G.grid.map((row, j) =>
      el(
        'tr',
        {},
        el('th', { class: 'mono', text: fmtNum(a1.values[j]) }),
        ...row.map((s, i) => {
          const t = shade(s.value, range, log);
          const c = s.cell;
          const text = s.value == null ? missing(c) : fmtCell(s.value, 3);
          const rt = reachedText(c);
          const inner = linkable(c) ? el('a', { href: '/runs/' + encodeURIComponent(c.run), text, 'data-run': c.run, title: `${labelOf(a0, 0)} = ${valueText(a0.values[i])}, ${labelOf(a1, 1)} = ${valueText(a1.values[j])} · ${info.title}: ${text}${rt ? ' · ' + rt : ''} · run ${c.run} (${c.status})` }) : el('span', { text });
          const sm = summaryOf(c);
          return el('td', { class: 'hm-cell', 'data-i': i, 'data-j': j, 'data-status': c ? c.status : 'none', 'data-reached': sm ? sm.reached : '', 'data-n': sm ? sm.replications : '', style: { background: colour(t), color: ink(t) } }, inner, rt ? el('div', { class: 'hm-reached small', text: rt }) : null);
        })
      )
    );
    const tbl = el('table', { class: 'heatmap', id: 'heatmap' }, el('thead', {}, head), el('tbody', {}, ...body));
    return el('div', { class: 'hm-wrap' }, el('h3', { text: `${info.title} — median over replications` }), tbl, scaleBar(range, log));
  }

  function scaleBar(range, log) {
    if (!range) return el('p', { class: 'muted small', text: 'no values yet' });
    const steps = 10;
    const bar = el('div', { class: 'hm-scale' }, el('span', { class: 'small mono', text: fmtCell(range.lo, 3) }));
    for (let i = 0; i < steps; i++) bar.append(el('span', { class: 'hm-swatch', style: { background: colour(i / (steps - 1)) } }));
    bar.append(el('span', { class: 'small mono', text: fmtCell(range.hi, 3) }), el('span', { class: 'muted small', text: log ? ' (log scale)' : ' (linear scale)' }));
    if (range.widened) bar.append(el('span', { class: 'muted small', id: 'hm-widened', text: ` · the values differ by only ${fmtCell(100 * range.span, 2)} %: the colours span ${log ? 'a factor 1.1' : '10 %'} so that nearly equal cells look nearly equal` }));
    return bar;
  }

  // linePlot: the outcome against the one axis' values, each point a link.
  function linePlot(G, range, log, info) {
    const a0 = G.axes[0] || { param: '', values: [] };
    const W = Math.max(360, Math.min(900, ($('#sweep-plot').clientWidth || 700) - 20)), H = 300;
    const L = 70, R = 20, T = 20, B = 50;
    const xs = a0.values.map(Number);
    const numericX = a0.values.every((x) => typeof x === 'number' && Number.isFinite(x));
    const xlog = numericX && xs.length > 2 && xs.every((x) => x > 0) && Math.max(...xs) / Math.min(...xs) >= 100;
    const fx = (v, i) => {
      if (!numericX || xs.length < 2) return L + ((i + 0.5) * (W - L - R)) / Math.max(1, xs.length);
      const f = (x) => (xlog ? Math.log10(x) : x);
      const lo = f(Math.min(...xs)), hi = f(Math.max(...xs));
      return L + ((f(v) - lo) / (hi - lo || 1)) * (W - L - R);
    };
    const fy = (v) => {
      const t = shade(v, range, log);
      return t == null ? null : T + (1 - t) * (H - T - B);
    };
    const root = svg('svg', { class: 'sweep-line', id: 'sweep-line', width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': `${info.title} against ${labelOf(a0, 0)}` });
    root.append(svg('rect', { x: L, y: T, width: W - L - R, height: H - T - B, fill: '#fff', stroke: '#ccd' }));
    if (range) {
      root.append(svg('text', { x: L - 6, y: T + 4, 'text-anchor': 'end', 'font-size': 11 }, fmtCell(range.hi, 3)));
      root.append(svg('text', { x: L - 6, y: H - B, 'text-anchor': 'end', 'font-size': 11 }, fmtCell(range.lo, 3)));
    }
    root.append(svg('text', { x: 12, y: T + (H - T - B) / 2, 'font-size': 11, transform: `rotate(-90 12 ${T + (H - T - B) / 2})`, 'text-anchor': 'middle' }, info.title + (log ? ' (log)' : '')));
    root.append(svg('text', { x: L + (W - L - R) / 2, y: H - 10, 'text-anchor': 'middle', 'font-size': 12 }, labelOf(a0, 0) + (xlog ? ' (log)' : '')));
    const pts = [];
    G.grid[0].forEach((s, i) => {
      const x = fx(xs[i], i);
      root.append(svg('text', { x, y: H - B + 16, 'text-anchor': 'middle', 'font-size': 11 }, fmtNum(a0.values[i])));
      const y = fy(s.value);
      if (y != null) pts.push([x, y]);
    });
    if (pts.length > 1) root.append(svg('polyline', { points: pts.map((p) => p.join(',')).join(' '), fill: 'none', stroke: '#1f77b4', 'stroke-width': 2 }));
    G.grid[0].forEach((s, i) => {
      const x = fx(xs[i], i);
      const y = fy(s.value);
      const c = s.cell;
      const label = s.value == null ? missing(c) : fmtCell(s.value, 3);
      const dot = svg('circle', { cx: x, cy: y == null ? H - B - 6 : y, r: 6, fill: y == null ? '#bbb' : '#1f77b4', 'data-i': i }, svg('title', {}, `${labelOf(a0, 0)} = ${valueText(a0.values[i])} · ${info.title}: ${label}${c && c.run ? ' · run ' + c.run : ''}`));
      root.append(linkable(c) ? svg('a', { href: '/runs/' + encodeURIComponent(c.run), 'data-run': c.run }, dot) : dot);
    });
    return el('div', { class: 'line-wrap' }, el('h3', { text: `${info.title} — median over replications` }), root);
  }

  function table(sw, G) {
    const axes = (sw.axes || []).some((a) => a.range) ? sw.axes : G.axes;
    const cols = ['final_objective', 'final_gap', 'passes_to_gap', 'seconds_to_gap'];
    $('#sweep-cells thead').replaceChildren(el('tr', {}, ...axes.map((a, i) => el('th', { title: a.param, text: labelOf(a, i) })), el('th', { text: 'run' }), el('th', { text: 'status' }), ...cols.map((c) => el('th', { text: OUTCOMES[c].title }))));
    $('#sweep-cells tbody').replaceChildren(
      ...(sw.cells || []).map((c) =>
        el(
          'tr',
          { 'data-run': c.run || '' },
          ...axes.map((a) => el('td', { class: 'mono', text: valueText((c.values || {})[a.param]) })),
          el('td', {}, linkable(c) ? el('a', { href: '/runs/' + encodeURIComponent(c.run), text: c.run }) : c.run || '—'),
          el('td', {}, el('span', { class: 'status st-' + c.status, text: c.status }), silenceText(c.worker, c.worker_beat) ? el('div', { class: 'small error worker-silent', 'data-silent': String(c.worker_beat.age_s), text: silenceText(c.worker, c.worker_beat) }) : ''),
          ...cols.map((k) => {
            const s = c.summary && S.algo && c.summary.per_algo && c.summary.per_algo[S.algo] ? c.summary.per_algo[S.algo] : c.summary;
            return el('td', { class: 'num', text: s && s[k] != null ? fmtCell(s[k], k === 'final_objective' ? 10 : 4) : '—' });
          })
        )
      )
    );
  }

  $('#outcome').addEventListener('change', (ev) => {
    S.outcome = ev.target.value;
    $('#sweep-log').checked = S.log = OUTCOMES[S.outcome].log;
    if (S.sweep) draw();
  });
  $('#sweep-algo').addEventListener('change', (ev) => {
    S.algo = ev.target.value;
    if (S.sweep) draw();
  });
  $('#sweep-log').addEventListener('change', (ev) => {
    S.log = ev.target.checked;
    if (S.sweep) draw();
  });
  $('#gap-target').addEventListener('change', (ev) => {
    const v = ev.target.value.trim();
    if (v !== '' && !(Number(v) > 0)) {
      showError('gap target: a positive number, such as 1e-6');
      return;
    }
    S.gap = v;
    poll();
  });
  $('#sweep-star').addEventListener('click', () => edit({ starred: !(S.sweep && S.sweep.starred) }));
  $('#sweep-edit').addEventListener('click', () => {
    $('#sweep-name-in').value = (S.sweep && S.sweep.name) || '';
    $('#sweep-note-in').value = (S.sweep && S.sweep.note) || '';
    $('#sweep-editor').hidden = false;
    $('#sweep-name-in').focus();
  });
  $('#sweep-edit-cancel').addEventListener('click', () => ($('#sweep-editor').hidden = true));
  $('#sweep-save').addEventListener('click', async () => {
    if (await edit({ name: $('#sweep-name-in').value, note: $('#sweep-note-in').value })) $('#sweep-editor').hidden = true;
  });
  async function edit(body) {
    const res = await api('PATCH', `/api/sweeps/${encodeURIComponent(id)}`, body);
    if (!res.ok) {
      showError(`${(res.data && res.data.field) || 'sweep'}: ${(res.data && res.data.error) || res.status}`);
      return false;
    }
    Object.assign(S.sweep, res.data);
    draw();
    return true;
  }
  $('#sweep-cancel').addEventListener('click', async () => {
    const res = await api('DELETE', `/api/sweeps/${encodeURIComponent(id)}`);
    if (!res.ok) showError(`cancel: ${(res.data && res.data.error) || res.status}`);
    poll();
  });
  let resizeTimer = 0;
  window.addEventListener('resize', () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => S.sweep && draw(), 150);
  });
  poll();
}
