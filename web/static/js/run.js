// The live run page: state, status, the traces table (one row per
// algorithm, replications behind a toggle), the page's one legend, the
// controls and the server/page record counts.

import { $, $$, el, api, fwlab, catalogue } from './util.js';
import { uses, algorithm } from './rules.js';
import { fmtCell, COLORS, plural } from './format.js';
import { Trace, Group, extraCap, MAX_EXTRA_KEYS, specRow } from './traces.js';
import { createCharts, resizeWithWindow, bindViewControls } from './charts.js';
import { createStream } from './stream.js';
import * as Teach from './teaching.js';
import * as Panels from './panels.js';
import { bindPNGButtons, exportTrace, exportBundle, exportFigure, chartPNG } from './export.js';
import { progressOf, fmtDuration, wallEta, silenceText } from './progress.js';
import { bindRunKeys } from './keys.js';
import { initVerify, outsideBadge } from './verify.js';

// STATUS_HELP explains each status beside its badge.
const STATUS_HELP = {
  queued: 'waiting for a free run slot (taken in turn across clients); Stop takes it off the queue',
  running: 'running',
  paused: 'paused: its worker slot is free until it is resumed',
  done: 'every trace has ended',
  failed: 'a trace failed: see the message',
  cancelled: 'stopped before it ended',
  interrupted: 'the server stopped during the run; its stored records are kept',
};
// A run a worker process took keeps that worker's slot while paused.
const WORKER_STATUS_HELP = {
  queued: 'waiting for a worker (taken in turn across clients); Stop takes it off the queue',
  paused: 'paused on its worker, which keeps its slot until the run is resumed or stopped',
};

export function initRun() {
  const page = $('#run-page');
  const params = new URLSearchParams(location.search);
  const specText = params.get('spec');
  const S = {
    runId: page.dataset.runId,
    traces: [],
    groups: [],
    byKey: {},
    status: null,
    info: null,
    fstar: null,
    xaxis: 'k',
    logx: false,
    objmode: 'raw',
    smooth: 0,
    showDrops: true,
    showAways: true,
    zoom: null,
    internal: 0,
    done: false,
    catchingUp: false,
    expanded: new Set(),
    stored: [],
  };
  fwlab.runState = S;
  // Where the page's time goes: JSON parsing, appending records, drawing;
  // and the longest stall of a 100 ms timer (is the page responsive?).
  const perf = (S.perf = fwlab.perf = { parseMs: 0, pushMs: 0, drawMs: 0, maxDrawMs: 0, draws: 0, bytes: 0, maxStallMs: 0, parts: {} });
  let tick = performance.now();
  setInterval(() => {
    const now = performance.now();
    perf.maxStallMs = Math.max(perf.maxStallMs, now - tick - 100);
    tick = now;
  }, 100);

  const charts = createCharts(S);
  fwlab.chartScale = charts.chartScale;
  fwlab.markProbe = charts.markProbe;
  fwlab.resetZoom = charts.resetZoom;
  fwlab.pngPreview = (id) => {
    const C = charts.charts.find((c) => c.def.id === id);
    if (!C || !C.u) return null;
    const r = chartPNG(C, S);
    return { width: r.canvas.width, height: r.canvas.height, legend: r.legend, title: r.title };
  };

  const MAX_GRAPH_NODES = 5000;
  const MAX_GRAPH_EDGES = 50000;

  const showError = (msg) => {
    const p = $('#run-error');
    p.textContent = msg;
    p.hidden = !msg;
  };

  function finished(t) {
    const st = S.status && S.status.traces && S.status.traces[t.meta.trace];
    return !!st && st.status !== 'running' && st.status !== 'paused';
  }

  // describe names what an algorithm row sets that acts on it: the
  // controls that apply to it come from the catalogue's algorithm table
  // (GET /api/scenarios, S.cat), as on the start page (rules.js uses).
  function describe(a) {
    if (!a) return '';
    const problem = S.status && S.status.spec && S.status.spec.problem;
    const use = uses(a.algo, algorithm(S.cat, a.algo).stochastic, problem, S.cat);
    const bits = [];
    if (a.stepsize && use.stepsize) bits.push(a.stepsize);
    if (a.L && a.L !== 'auto' && use.L) bits.push('L=' + a.L);
    if (a.schedule && a.schedule !== 'full') {
      let s = a.schedule;
      if (a.schedule === 'paper') s += ` ρ=${a.rho || 0.1} α=${a.alpha || 0.5}`;
      if (a.schedule === 'constant') s += ` m0=${a.m0 || 1}`;
      if (a.schedule === 'geometric') s += ` m0=${a.m0 || 1}×${a.growth || 1.1}`;
      bits.push(s);
    }
    if (a.r) bits.push('r=' + a.r);
    return bits.join(', ');
  }

  // setupTraces creates traces and groups from a status JSON (once per
  // trace). The n-th trace of algorithm A with replication j belongs to the
  // n-th row of algorithm A.
  function setupTraces(run) {
    const seen = {};
    let added = false;
    for (const tm of run.traces || []) {
      const tk = tm.algo + '/' + tm.replication;
      const ord = (seen[tk] = (seen[tk] || 0) + 1) - 1;
      if (S.traces[tm.trace]) continue;
      const key = tm.algo + '#' + ord;
      let g = S.byKey[key];
      const { row: a, numbered } = specRow(run.spec, run.traces, tm, ord);
      if (!g) {
        const label = tm.algo + (numbered ? ` #${ord + 1}` : '') + (a && describe(a) ? ` (${describe(a)})` : '');
        g = S.byKey[key] = new Group(key, label, COLORS[S.groups.length % COLORS.length]);
        S.groups.push(g);
      }
      const t = new Trace(tm, !!(S.info && S.info.panels && S.info.panels.geometry));
      t.group = g;
      // the table's family of the spec row's algorithm (the trace's name may
      // add " + slack collapse"): the teaching view draws a proximal
      // method's path
      t.family = algorithm(S.cat, a ? a.algo : tm.algo).family;
      g.traces.push(t);
      S.traces[tm.trace] = t;
      added = true;
    }
    if (!added) return;
    fwlab.traces = S.traces.map((t) => ({
      trace: t.meta.trace,
      algo: t.meta.algo,
      family: t.family,
      replication: t.meta.replication,
      color: t.group.color,
      get n() {
        return t.n;
      },
      get lastK() {
        return t.n ? t.cols.k[t.n - 1] : -1;
      },
      // the last x on the charts' axis
      get lastX() {
        return t.n && t.cols[S.xaxis] ? t.cols[S.xaxis][t.n - 1] : null;
      },
      get status() {
        const st = S.status && S.status.traces && S.status.traces[t.meta.trace];
        return st ? st.status : '';
      },
      get drops() {
        return t.drops.length;
      },
    }));
    fwlab.groups = S.groups.map((g) => ({ key: g.key, label: g.label, color: g.color, reps: g.traces.length }));
    pageLegend();
  }

  // pageLegend: the page's one legend, each algorithm's colour and label.
  function pageLegend() {
    $('#legend-algos').replaceChildren(
      ...S.groups.map((g) =>
        el('span', { class: 'legend-algo', 'data-group': g.key }, el('span', { class: 'swatch', style: { background: g.color } }), ` ${g.label}${g.band ? ` · median of ${g.traces.length}, band min–max` : ''}`)
      )
    );
  }

  function onStatus(run, hello) {
    if (!run) return;
    const first = !S.status;
    S.status = run;
    fwlab.status = run.status;
    // The status never carries the instance's panels ("has_panels" says
    // there are some): they are fetched on their own and kept here.
    if (run.info) S.info = Object.assign({}, run.info, instancePanels ? { panels: instancePanels } : {});
    if (run.has_panels && !instancePanels) loadPanels();
    const fstar = S.info && S.info.fstar != null ? S.info.fstar : null;
    if (!first && S.fstar == null && fstar != null) {
      // an instance built after the page opened (a run a worker took):
      // its F* offers the distance to the optimum, shown at once unless
      // the user chose another view
      S.fstar = fstar;
      const om = $('#objmode');
      $('option[value=fstar]', om).disabled = false;
      $('option[value=best]', om).hidden = true;
      if (S.objmode === 'best' && !S.objChosen) {
        om.value = 'fstar';
        om.dispatchEvent(new Event('change', { bubbles: true }));
      }
    }
    if (first || hello) {
      S.fstar = fstar;
      if (first) {
        // The objective's distance to the optimum: from F* when known,
        // else from the best value seen.
        S.objmode = S.fstar != null ? 'fstar' : 'best';
        const om = $('#objmode');
        om.value = S.objmode;
        $('option[value=fstar]', om).disabled = S.fstar == null;
        $('option[value=best]', om).hidden = S.fstar != null;
      }
      setupTraces(run);
      if (!charts.charts.length) charts.build();
      if (S.info && S.info.panels) {
        if (S.info.panels.geometry) Teach.init(S, S.info.panels.geometry);
        Panels.render(safePanels(S.info.panels));
      }
      const sp = run.spec ? JSON.stringify(run.spec) : specText;
      if (sp) $('#edit-spec').href = '/?spec=' + encodeURIComponent(sp);
      $('#edit-spec').hidden = !!(run.spec && run.spec.outside); // nothing of fwlab's to rerun
    }
    const info = S.info || {};
    const bits = [];
    if (run.spec) bits.push(run.spec.problem);
    if (info.dim) bits.push(`p = ${info.dim}`);
    if (info.samples) bits.push(`n = ${info.samples}`);
    if (info.blocks) bits.push(`q = ${plural(info.blocks, 'block', 'blocks')}`);
    if (S.fstar != null) bits.push(`F* = ${fmtCell(S.fstar, 10)}`);
    $('#run-info').textContent = bits.join(' · ');
    setupTraces(run);
    resultPanels(run);
    const failed = (run.traces || []).filter((t) => t.status === 'failed');
    if (failed.length) showError(failed.map((t) => `trace ${t.trace} (${t.algo}, replication ${t.replication}) failed: ${(t.summary && t.summary.message) || 'no message'}`).join('; '));
    $('#run-status').textContent = run.status === 'queued' && run.queue_position ? `queued (position ${run.queue_position})` : run.status;
    $('#run-status').className = 'status st-' + run.status;
    if (run.worker) S.worker = run.worker; // a control's answer may leave it out
    $('#run-status').title = (S.worker && WORKER_STATUS_HELP[run.status]) || STATUS_HELP[run.status] || '';
    if (run.worker) workerBadge(run.worker);
    if (run.spec && run.spec.outside && !document.getElementById('run-outside')) {
      const b = outsideBadge(true);
      b.id = 'run-outside';
      $('#run-status').after(b);
    }
    if (S.worker) workerSilence(run);
    page.dataset.status = run.status;
    fwlab.queuePosition = run.queue_position || 0;
    const msg = $('#run-message');
    const text = run.message || (run.status === 'interrupted' ? 'The server stopped during this run; the records it had stored are kept.' : '');
    msg.textContent = text;
    msg.hidden = !text;
    const paused = run.status === 'paused', active = run.status === 'running' || paused;
    // a run opened from outside is logged by its program: no pause or step
    $('#btn-pause').disabled = !active || paused || !!(run.spec && run.spec.outside);
    $('#btn-resume').disabled = !paused;
    $('#btn-step').disabled = !paused;
    $('#btn-stop').disabled = !active && run.status !== 'queued';
    verifyStatus(run.status, run.spec && run.spec.outside);
    meta(run);
    // Paused: the page shows the run where the server paused it. What the
    // stream has not delivered shortly (a single step's records arrive at
    // once) is fetched with the complete trace.
    if (paused) {
      clearTimeout(pausedTimer);
      pausedTimer = setTimeout(() => {
        if (S.status && S.status.status === 'paused' && !S.catchingUp && pageRecords() < serverRecords()) stream.catchUp();
      }, 400);
    }
    scheduleDraw();
  }
  let pausedTimer = 0;

  // The instance's panels (GET /api/runs/{id}/panels), null until fetched.
  let instancePanels = null;
  let panelsLoading = null;
  async function fetchPanels() {
    const res = await api('GET', `/api/runs/${encodeURIComponent(S.runId)}/panels`);
    if (!res.ok || !res.data) throw new Error((res.data && res.data.error) || `the server answered ${res.status}`);
    return res.data;
  }
  // loadPanels fetches the panels of an instance built after the page
  // opened (a queued run that has started) and shows them.
  function loadPanels() {
    if (panelsLoading) return panelsLoading;
    panelsLoading = (async () => {
      try {
        showPanels(await fetchPanels());
      } catch (e) {
        showError(`fetching the instance's panels failed: ${e.message}`);
        panelsLoading = null;
      }
    })();
    return panelsLoading;
  }
  function showPanels(p) {
    const first = !instancePanels;
    instancePanels = p;
    S.info = Object.assign({}, S.info || {}, { panels: p });
    if (p.geometry) {
      // traces made before the geometry was known keep the teaching
      // view's metrics from now on, and get those of the records they
      // hold from the complete trace
      let refill = false;
      for (const t of S.traces) {
        if (t && !t.extras) {
          refill = refill || t.n > 0;
          t.keepExtras();
        }
      }
      if (first) Teach.init(S, p.geometry);
      if (refill) stream.catchUp(true);
    }
    Panels.render(safePanels(p));
    scheduleDraw();
  }
  const verifyStatus = initVerify(S.runId);

  const pageRecords = () => S.traces.reduce((a, t) => a + (t ? t.n : 0), 0);
  function serverRecords() {
    const st = (S.status && S.status.traces) || [];
    let server = 0;
    for (const s of st) server += s.records || 0;
    if (S.status && typeof S.status.records === 'number') server = Math.max(server, S.status.records);
    return Math.max(server, S.stored.reduce((a, n) => a + (n || 0), 0));
  }

  // meta shows the run's name, note and star (stored runs have them).
  let metaShown = false;
  function meta(run) {
    const has = run.name !== undefined || run.note !== undefined || run.starred !== undefined;
    $('.run-meta').hidden = !has;
    if (!has) return;
    const star = $('#run-star');
    star.textContent = run.starred ? '★' : '☆';
    star.classList.toggle('on', !!run.starred);
    star.setAttribute('aria-pressed', String(!!run.starred));
    if (metaShown) return;
    metaShown = true;
    $('#run-name').value = run.name || '';
    $('#run-note').value = run.note || '';
    if (run.name) document.title = `${run.name} · fwlab`;
  }
  async function saveMeta(body) {
    const res = await api('PATCH', `/api/runs/${encodeURIComponent(S.runId)}`, body);
    const st = $('#run-meta-status');
    if (!res.ok) {
      st.textContent = `not saved: ${res.data && res.data.field ? res.data.field + ': ' : ''}${(res.data && res.data.error) || res.status}`;
      st.className = 'error small';
      return;
    }
    st.className = 'muted small';
    st.textContent = 'saved';
    $('#run-meta-save').disabled = true;
    const d = res.data || {};
    if (S.status) Object.assign(S.status, { name: d.name ?? body.name ?? S.status.name, note: d.note ?? body.note ?? S.status.note, starred: d.starred ?? body.starred ?? S.status.starred });
    if (S.status) meta(S.status);
    fwlab.saved = (fwlab.saved || 0) + 1;
  }
  for (const id of ['#run-name', '#run-note']) $(id).addEventListener('input', () => ($('#run-meta-save').disabled = false));
  $('#run-meta-save').addEventListener('click', () => saveMeta({ name: $('#run-name').value.trim(), note: $('#run-note').value.trim() }));
  $('#run-star').addEventListener('click', () => saveMeta({ starred: !(S.status && S.status.starred) }));

  // compareWith offers the server's other runs of the same problem.
  async function compareWith() {
    const problem = S.status && S.status.spec && S.status.spec.problem;
    let res;
    try {
      res = await api('GET', '/api/runs?limit=30' + (problem ? '&problem=' + encodeURIComponent(problem) : ''));
    } catch (e) {
      return;
    }
    const list = res.ok && res.data ? (Array.isArray(res.data) ? res.data : res.data.runs || []) : [];
    const sel = $('#compare-with');
    sel.replaceChildren(el('option', { value: '', text: 'choose a run…' }), ...list.filter((r) => r.id !== S.runId).map((r) => el('option', { value: r.id, text: `${r.name || r.id} · ${(r.algorithms || []).join(', ') || r.problem || ''} · ${r.status}` })));
    sel.closest('label').hidden = sel.options.length < 2;
  }
  $('#compare-with').addEventListener('change', (ev) => {
    if (ev.target.value) location.assign(`/compare?runs=${encodeURIComponent(S.runId)},${encodeURIComponent(ev.target.value)}`);
  });

  // A run's status never carries the traces' panels (has_panels marks the
  // traces that have some): each shown trace's are fetched once, from
  // GET /api/runs/{id}/traces/{t}/panels, when it has finished with them.
  const tracePanels = new Map(); // trace → its panels; null while fetched or after a failure
  let resultSig = '';
  async function fetchTracePanels(tr) {
    tracePanels.set(tr, null);
    try {
      const res = await api('GET', `/api/runs/${encodeURIComponent(S.runId)}/traces/${tr}/panels`);
      if (res.ok && res.data && typeof res.data === 'object' && !Array.isArray(res.data)) tracePanels.set(tr, res.data);
      else showError(`fetching trace ${tr}'s panels failed: ${(res.data && res.data.error) || `the server answered ${res.status}`}`);
    } catch (e) {
      showError(`fetching trace ${tr}'s panels failed: ${e.message}`);
    }
    if (S.status) resultPanels(S.status);
  }
  function resultPanels(run) {
    const traces = run.traces || [];
    const out = [];
    for (const g of S.groups) {
      const ts = g.traces.map((t) => traces[t.meta.trace]).filter((t) => t && t.has_panels).sort((a, b) => a.replication - b.replication);
      if (!ts.length) continue;
      const p = tracePanels.get(ts[0].trace);
      if (p === undefined) fetchTracePanels(ts[0].trace);
      else if (p) out.push({ label: g.label, color: g.color, trace: ts[0].trace, replication: ts[0].replication, panels: p, csv: `/api/runs/${encodeURIComponent(S.runId)}/traces/${ts[0].trace}/coefficients.csv` });
    }
    const sig = out.map((r) => r.trace).join(',');
    if (sig === resultSig) return;
    resultSig = sig;
    Panels.setResults(out);
  }

  const stream = createStream(S, {
    status: onStatus,
    records: scheduleDraw,
    error: showError,
    incomplete: (info) => {
      const box = $('#trace-incomplete');
      box.hidden = !info;
      if (!info) return;
      const pct = info.expected ? ((100 * info.loaded) / info.expected).toFixed(1) : '0';
      $('#trace-incomplete-text').textContent =
        `Incomplete: the page holds ${info.loaded} of the ${info.expected} records the server counts (${pct}%)` +
        `${info.error ? ` — the download failed: ${info.error}` : ''}. The charts and exports show only what was loaded.`;
    },
    done: async () => {
      if (S.status && S.status.has_panels) {
        try {
          showPanels(await fetchPanels());
        } catch (e) {
          if (!instancePanels) showError(`fetching the instance's panels failed: ${e.message}`);
        }
      }
      fwlab.done = true;
      scheduleDraw();
    },
  });

  // ------------------------------------------------------------ drawing

  let drawTimer = null, lastDraw = 0;
  function scheduleDraw() {
    if (drawTimer) return;
    const wait = Math.max(0, 100 - (performance.now() - lastDraw));
    drawTimer = setTimeout(() => {
      requestAnimationFrame(() => {
        drawTimer = null;
        lastDraw = performance.now();
        drawAll();
      });
    }, wait);
  }

  function drawAll() {
    const t0 = performance.now();
    for (const g of S.groups) g.update(finished);
    const timed = (name, fn) => {
      const t1 = performance.now();
      fn();
      perf.parts[name] = (perf.parts[name] || 0) + performance.now() - t1;
    };
    timed('charts', charts.drawAll);
    timed('table', tracesTable);
    timed('teach', Teach.update);
    syncLine();
    progressLine();
    noteExtraCap();
    const dt = performance.now() - t0;
    perf.drawMs += dt;
    perf.draws++;
    perf.maxDrawMs = Math.max(perf.maxDrawMs, dt);
  }

  // syncLine shows the server's record count beside the page's, and
  // "catching up" while the page is behind.
  function syncLine() {
    const st = (S.status && S.status.traces) || [];
    let server = serverRecords(), here = 0;
    void st;
    for (const t of S.traces) if (t) here += t.n;
    // The status may be older than the records that followed it.
    server = Math.max(server, here);
    const behind = here < server || S.catchingUp;
    const line = $('#run-sync');
    line.textContent = `server ${server.toLocaleString('en')} records · page ${here.toLocaleString('en')}` + (behind ? ' · catching up…' : '');
    line.classList.toggle('behind', behind);
    fwlab.sync = { server, page: here, behind };
  }

  // progressLine shows how far the run is towards its limits, and the
  // time left at its traces' own rates.
  function progressLine() {
    const run = S.status;
    if (!run || !run.spec) return;
    const st = run.traces || [];
    const p = progressOf(
      run.spec,
      S.traces.map((t) => (t ? { last: t.last.rec, status: (st[t.meta.trace] || {}).status } : null)).filter(Boolean)
    );
    const live = run.status === 'running' || run.status === 'paused' || run.status === 'queued';
    const bar = $('#run-progress');
    bar.value = live ? p.fraction : run.status === 'done' ? 1 : p.fraction;
    const pct = `${Math.floor(100 * bar.value)}%`;
    // the time left from the run's progress over wall time (a pause
    // starts the measurement again)
    const now = performance.now();
    if (run.status !== 'running') S.etaSamples = [];
    else {
      S.etaSamples = S.etaSamples || [];
      const prev = S.etaSamples[S.etaSamples.length - 1];
      if (!prev || p.fraction !== prev.f || now - prev.t > 1000) S.etaSamples.push({ t: now, f: p.fraction });
      if (S.etaSamples.length > 2000) S.etaSamples.splice(0, 1000);
    }
    const left = run.status === 'running' ? wallEta(S.etaSamples, now) : null;
    const eta = !live ? '' : run.status === 'paused' ? ' · paused' : left == null ? ' · time left: measuring…' : ` · about ${fmtDuration(left)} left at this rate`;
    $('#run-eta').textContent = pct + eta;
    fwlab.progress = { fraction: p.fraction, eta: live ? left : 0 };
  }

  // tracesTable: one row per algorithm (replications summarised), and one
  // per replication under it when expanded. Rows are kept and their cells
  // updated in place, so that a click on a row's toggle is never lost to a
  // redraw.
  const rowCache = new Map();
  let rowOrder = '';
  function row(key, attrs, first) {
    let r = rowCache.get(key);
    if (!r) {
      r = el('tr', attrs, ...first);
      r._cells = [];
      r._key = key;
      for (let i = first.length; i < 12; i++) r._cells.push(r.appendChild(el('td')));
      rowCache.set(key, r);
    }
    return r;
  }
  function fill(r, values) {
    values.forEach((v, i) => {
      const td = r._cells[i];
      const text = typeof v === 'object' && v ? v.text : v;
      if (td.textContent !== text) td.textContent = text;
      if (v && v.title != null && td.title !== v.title) td.title = v.title;
    });
  }
  function tracesTable() {
    const tb = $('#legend tbody');
    const st = (S.status && S.status.traces) || [];
    const rows = [];
    const cells = (t, s) => {
      const r = t.last.rec || {};
      const sum = s.summary || null;
      return [
        { text: s.status || '', title: (sum && sum.message) || '' },
        String(t.n),
        fmtCell(r.k),
        fmtCell(r.passes, 4),
        fmtCell(r.time_s, 3),
        fmtCell(sum ? sum.objective : t.last.objective, 10),
        fmtCell(sum ? sum.gap : t.last.gap, 3),
        fmtCell(r.active),
        String(t.drops.length),
        String(t.aways.length),
      ];
    };
    for (const g of S.groups) {
      const ts = g.traces;
      const sw = () => el('td', {}, el('span', { class: 'swatch', style: { background: g.color } }));
      if (ts.length === 1) {
        const s = st[ts[0].meta.trace] || {};
        const r = row('t' + ts[0].meta.trace, { 'data-trace': ts[0].meta.trace, 'data-group': g.key }, [sw(), el('td', { text: g.label })]);
        r.dataset.records = ts[0].n;
        fill(r, cells(ts[0], s));
        rows.push(r);
        continue;
      }
      const statuses = {};
      for (const t of ts) {
        const s = (st[t.meta.trace] || {}).status || '';
        statuses[s] = (statuses[s] || 0) + 1;
      }
      const med = (f) => {
        const v = ts.map(f).filter((x) => x != null && isFinite(x)).sort((a, b) => a - b);
        return v.length ? (v.length & 1 ? v[v.length >> 1] : 0.5 * (v[v.length / 2 - 1] + v[v.length / 2])) : null;
      };
      const sumOf = (t) => (st[t.meta.trace] || {}).summary || null;
      const gr = row('g' + g.key, { class: 'group-row', 'data-group': g.key }, [sw(), groupLabel(g)]);
      const open = S.expanded.has(g.key);
      gr.children[1].lastChild.nodeValue = ` ${g.label} · ${ts.length} replications`;
      const tog = $('button.expand', gr);
      tog.textContent = open ? '▾' : '▸';
      tog.setAttribute('aria-expanded', String(open));
      tog.title = open ? 'hide the replications' : 'show each replication';
      fill(gr, [
        Object.entries(statuses).map(([k, v]) => `${v} ${k}`).join(', '),
        String(ts.reduce((a, t) => a + t.n, 0)),
        fmtCell(med((t) => t.last.rec && t.last.rec.k)),
        fmtCell(med((t) => t.last.rec && t.last.rec.passes), 4),
        fmtCell(med((t) => t.last.rec && t.last.rec.time_s), 3),
        { text: fmtCell(med((t) => (sumOf(t) ? sumOf(t).objective : t.last.objective)), 10), title: 'median over the replications' },
        { text: fmtCell(med((t) => (sumOf(t) ? sumOf(t).gap : t.last.gap)), 3), title: 'median over the replications' },
        fmtCell(med((t) => t.last.rec && t.last.rec.active)),
        String(ts.reduce((a, t) => a + t.drops.length, 0)),
        String(ts.reduce((a, t) => a + t.aways.length, 0)),
      ]);
      rows.push(gr);
      if (!open) continue;
      for (const t of ts) {
        const s = st[t.meta.trace] || {};
        const r = row('t' + t.meta.trace, { class: 'rep-row', 'data-trace': t.meta.trace }, [el('td'), el('td', { text: `replication ${t.meta.replication} (seed ${t.meta.seed})` })]);
        r.dataset.records = t.n;
        fill(r, cells(t, s));
        rows.push(r);
      }
    }
    const order = rows.map((r) => r._key).join(',');
    if (order !== rowOrder) {
      rowOrder = order;
      tb.replaceChildren(...rows);
    }
  }
  function groupLabel(g) {
    const toggle = el('button', { type: 'button', class: 'small expand', 'aria-expanded': 'false', text: '▸' });
    toggle.addEventListener('click', () => {
      S.expanded.has(g.key) ? S.expanded.delete(g.key) : S.expanded.add(g.key);
      tracesTable();
    });
    return el('td', {}, toggle, ` ${g.label} · ${g.traces.length} replications`);
  }

  // ------------------------------------------------------------ controls

  const post = async (what) => {
    const res = await api('POST', `/api/runs/${encodeURIComponent(S.runId)}/${what}`);
    if (!res.ok) showError(`${what}: ${(res.data && res.data.error) || res.status}`);
    else {
      showError('');
      onStatus(res.data);
    }
  };
  $('#btn-pause').addEventListener('click', () => post('pause'));
  $('#btn-resume').addEventListener('click', () => post('resume'));
  $('#btn-step').addEventListener('click', () => post('step'));
  $('#btn-stop').addEventListener('click', async () => {
    const res = await api('DELETE', `/api/runs/${encodeURIComponent(S.runId)}`);
    if (!res.ok) showError(`stop: ${(res.data && res.data.error) || res.status}`);
  });
  $('#trace-retry').addEventListener('click', () => stream.catchUp());
  bindViewControls(charts, S, scheduleDraw);
  $('#export-csv').addEventListener('click', () => exportTrace(S, 'csv', showError));
  $('#export-jsonl').addEventListener('click', () => exportTrace(S, 'jsonl', showError));
  $('#export-json').addEventListener('click', () => exportBundle(S, showError));
  $('#export-figure').addEventListener('click', () => exportFigure(S, $('#figure-format').value, showError));
  bindPNGButtons(charts, S);
  resizeWithWindow(charts, S);
  bindRunKeys(() => charts.resetZoom());

  // --------------------------------------------------------------- start

  // safePanels returns the instance's panels with a task graph the page can
  // draw: edges whose node ids are not whole numbers below the graph's size
  // (its correlation matrix's order, else MAX_GRAPH_NODES) are left out, and
  // at most MAX_GRAPH_EDGES are kept, so that a hostile stored run (an edge
  // naming node 30 000 000) cannot freeze the page. What was left out is
  // said under the panels.
  function safePanels(p) {
    if (!p || typeof p !== 'object' || Array.isArray(p)) return p;
    const out = { ...p };
    const notes = [];
    const isId = (v, n) => Number.isInteger(v) && v >= 0 && v < n;
    const n = Array.isArray(p.corr) && p.corr.length ? Math.min(p.corr.length, MAX_GRAPH_NODES) : MAX_GRAPH_NODES;
    if (Array.isArray(p.edges)) {
      const ends = (e) => (Array.isArray(e) ? [e[0], e[1]] : e && typeof e === 'object' ? [e.m != null ? e.m : e.from, e.l != null ? e.l : e.to] : [NaN, NaN]);
      const kept = p.edges.filter((e) => ends(e).every((v) => isId(v, n))).slice(0, MAX_GRAPH_EDGES);
      if (kept.length < p.edges.length) notes.push(`${p.edges.length - kept.length} of ${p.edges.length} task-graph edges left out (node ids must be whole numbers below ${n}; at most ${MAX_GRAPH_EDGES} edges are drawn)`);
      out.edges = kept;
    }
    if (Array.isArray(p.components)) {
      let dropped = 0;
      out.components = p.components.map((c) => {
        if (!Array.isArray(c)) return c;
        const k = c.filter((v) => isId(v, n));
        dropped += c.length - k.length;
        return k;
      });
      if (dropped) notes.push(`${dropped} component members left out (not node ids below ${n})`);
    }
    fwlab.panelNotes = notes;
    let note = $('#panel-notes');
    if (!note && notes.length) {
      note = el('p', { id: 'panel-notes', class: 'muted small' });
      $('#panels').append(note);
    }
    if (note) note.textContent = notes.join('; ');
    return out;
  }

  // noteExtraCap says under the charts when a run carries more extra
  // metrics than the page charts.
  function noteExtraCap() {
    const d = extraCap.dropped.size;
    fwlab.extraDropped = d;
    if (!d) return;
    let note = $('#extra-capped');
    if (!note) {
      note = el('p', { id: 'extra-capped', class: 'muted small' });
      $('#extra-charts').before(note);
    }
    note.textContent = `${d} more problem-specific metrics are not charted: the page charts at most ${MAX_EXTRA_KEYS} (every metric is in the exports).`;
  }

  // confirmStart shows the spec of a run link with a Start button and
  // resolves with the created run once the user has pressed it and the
  // server accepted the spec (a refusal is shown and the button stays).
  function confirmStart(spec) {
    const box = $('#spec-start');
    const btn = $('#btn-start-spec');
    $('#spec-start-text').textContent = JSON.stringify(spec, null, 2);
    $('#spec-start-edit').href = '/?spec=' + encodeURIComponent(specText);
    box.hidden = false;
    page.dataset.status = 'awaiting-start';
    fwlab.awaitingStart = true;
    return new Promise((resolve) => {
      btn.addEventListener('click', async function onClick() {
        btn.disabled = true;
        const created = await api('POST', '/api/runs', spec);
        btn.disabled = false;
        if (created.status !== 201) {
          showError(`the spec was refused: ${created.data && created.data.field ? created.data.field + ': ' : ''}${(created.data && created.data.error) || created.status}`);
          return;
        }
        showError('');
        btn.removeEventListener('click', onClick);
        box.hidden = true;
        fwlab.awaitingStart = false;
        resolve(created);
      });
    });
  }

  async function start() {
    let res = await api('GET', `/api/runs/${encodeURIComponent(S.runId)}`);
    if (res.status === 404 && specText) {
      // An unknown id with a spec in the URL: show the spec and start it
      // only when the user presses Start (a page elsewhere may have opened
      // this link; it must not start runs by itself).
      let spec;
      try {
        spec = JSON.parse(specText);
      } catch (e) {
        showError(`the spec in the URL is not valid JSON: ${e.message}`);
        page.dataset.status = 'missing';
        return;
      }
      const created = await confirmStart(spec);
      S.runId = created.data.id;
      page.dataset.runId = S.runId;
      $('#run-id').textContent = S.runId;
      history.replaceState(null, '', `/runs/${encodeURIComponent(S.runId)}?spec=${encodeURIComponent(specText)}`);
      fwlab.resubmitted = S.runId;
      res = await api('GET', `/api/runs/${encodeURIComponent(S.runId)}`);
    }
    if (!res.ok) {
      showError(`run ${S.runId}: ${(res.data && res.data.error) || 'not found'} (status ${res.status})`);
      page.dataset.status = 'missing';
      return;
    }
    fwlab.runId = S.runId;
    S.cat = await catalogue(); // before the traces' labels, which name what acts on each algorithm
    if (res.data && res.data.has_panels) {
      // the panels first: the teaching view's geometry decides what the
      // traces keep
      try {
        instancePanels = await fetchPanels();
      } catch (e) {
        showError(`fetching the instance's panels failed: ${e.message}`);
      }
    }
    onStatus(res.data, true);
    stream.connect();
    compareWith();
  }
  start();

  // bandProbe samples the chart's canvas between the min and max edges of
  // each band, away from the median line, and reports how many of the
  // samples carry the band's fill colour. With fwlab.probeDebug set to an
  // array, the samples without it are pushed there.
  fwlab.bandProbe = (id) => {
    const C = charts.charts.find((c) => c.def.id === id);
    if (!C || !C.u || !C.series) return { samples: 0, filled: 0 };
    const u = C.u, ctx = u.ctx;
    let samples = 0, filled = 0;
    for (const s of C.series) {
      if (!s.g.band) continue;
      const base = 1 + s.at, w = s.cols.length;
      const med = u.data[base], lo = u.data[base + w - 2], hi = u.data[base + w - 1];
      const want = parseInt(s.g.color.slice(1), 16);
      const rgb = [(want >> 16) & 255, (want >> 8) & 255, want & 255];
      for (let i = 0; i < u.data[0].length && samples < 200; i++) {
        if (lo[i] == null || hi[i] == null || med[i] == null) continue;
        const x = u.valToPos(u.data[0][i], 'x', true);
        const yl = u.valToPos(lo[i], 'y', true), yh = u.valToPos(hi[i], 'y', true), ym = u.valToPos(med[i], 'y', true);
        if (!(Math.abs(yl - yh) >= 10)) continue;
        const y = Math.abs(ym - yl) > Math.abs(ym - yh) ? (ym + yl) / 2 : (ym + yh) / 2;
        if (Math.abs(y - ym) < 4 || x < u.bbox.left + 2 || x > u.bbox.left + u.bbox.width - 2) continue;
        // Clear of the event lanes along the top and bottom.
        if (y < u.bbox.top + 30 || y > u.bbox.top + u.bbox.height - 30) continue;
        const px = ctx.getImageData(Math.round(x), Math.round(y), 1, 1).data;
        const near = Math.abs(px[0] - rgb[0]) < 40 && Math.abs(px[1] - rgb[1]) < 40 && Math.abs(px[2] - rgb[2]) < 40;
        const dot = px[0] * rgb[0] + px[1] * rgb[1] + px[2] * rgb[2];
        const np = Math.hypot(px[0], px[1], px[2]), nw = Math.hypot(rgb[0], rgb[1], rgb[2]);
        const sameHue = np >= 0.5 * nw && dot / (np * nw) > 0.99;
        const ok = px[3] > 20 && (near || sameHue);
        if (!ok && fwlab.probeDebug) fwlab.probeDebug.push({ i, x, y, yl, yh, ym, px: Array.from(px) });
        samples++;
        if (ok) filled++;
      }
    }
    return { samples, filled };
  };

  // groupStat reports the median, minimum and maximum over a group's
  // replications of one column at record index i (null: not computed yet).
  fwlab.groupStat = (gi, col, i) => {
    const g = S.groups[gi];
    if (!g || i >= g.n) return null;
    const num = (x) => (x === x ? x : null);
    return { algo: g.traces[0].meta.algo, reps: g.traces.length, n: g.n, med: num(g.val(col, i)), lo: num(g.low(col, i)), hi: num(g.high(col, i)) };
  };
}

const LIVE_STATUS = new Set(['queued', 'running', 'paused']);

// workerSilence says, beside the run's status, that the run's worker is
// silent and when the run will be queued again. A stream sends a status
// only when something changes, which a silent worker never does: while a
// worker holds the run, the page asks for the status every 2 s.
let silenceTimer = 0;
function workerSilence(run) {
  let b = document.getElementById('run-silent');
  if (!b) {
    b = document.createElement('span');
    b.id = 'run-silent';
    b.className = 'small error';
    (document.getElementById('run-worker') || document.getElementById('run-status')).after(b);
  }
  const text = LIVE_STATUS.has(run.status) ? silenceText(run.worker, run.worker_beat) : '';
  b.textContent = text ? ' · ' + text : '';
  b.dataset.silent = text ? String(run.worker_beat.age_s) : '';
  clearTimeout(silenceTimer);
  if (!LIVE_STATUS.has(run.status) || !run.worker_beat) return;
  silenceTimer = setTimeout(async () => {
    try {
      const res = await api('GET', `/api/runs/${encodeURIComponent(run.id)}`);
      if (res.ok && res.data && res.data.status === run.status) workerSilence({ ...run, worker_beat: res.data.worker_beat || null, worker: res.data.worker || run.worker });
    } catch (e) {
      /* the next status will tell */
    }
  }, 2000);
}

// workerBadge names, beside the run's status, the worker process that runs
// or ran it (a run taken from a PostgreSQL store's queue). A stream's
// status messages do not repeat it, so it stays once shown.
function workerBadge(name) {
  let b = document.getElementById('run-worker');
  if (!b) {
    b = document.createElement('span');
    b.id = 'run-worker';
    b.className = 'small muted';
    b.title = 'the worker process that runs this run';
    document.getElementById('run-status').after(b);
  }
  b.textContent = ' on ' + name;
  b.dataset.worker = name;
}
