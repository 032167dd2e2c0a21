// The compare page: the traces of two or more runs (live or stored)
// overlaid on the run page's charts, with its controls (x-axis, log axes,
// objective view, bands, smoothing, marks), and their specs side by side
// with the differing parameters highlighted. Runs on different instances
// are allowed and flagged.

import { $, el, api, fwlab, catalogue } from './util.js';
import { fmtCell, COLORS } from './format.js';
import { Trace, Group, specRow } from './traces.js';
import { createCharts, resizeWithWindow, bindViewControls } from './charts.js';
import { specDiff, differentInstances } from './lab.js';
import { bindPNGButtons } from './export.js';
import { effectiveSpec, runLabel, ownName } from './effective.js';

const LIVE = new Set(['queued', 'running', 'paused']);

export function initCompare() {
  const page = $('#compare-page');
  const ids = (page.dataset.runs || '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .filter((s, i, a) => a.indexOf(s) === i);
  const S = {
    runId: 'compare',
    traces: [],
    groups: [],
    status: null,
    info: null,
    fstar: null,
    xaxis: 'k',
    logx: false,
    objmode: 'raw',
    smooth: 0,
    bands: true,
    showDrops: true,
    showAways: true,
    zoom: null,
    internal: 0,
    perf: { draws: 0 },
  };
  fwlab.compareState = S;
  fwlab.compare = { runs: ids, loaded: false, groups: [], flagged: false, differ: [] };
  const showError = (msg) => {
    const p = $('#run-error');
    p.textContent = msg || '';
    p.hidden = !msg;
  };
  if (ids.length < 2) {
    showError('Choose two or more runs to compare: /compare?runs=ID1,ID2 (select them on the history page).');
    page.dataset.status = 'missing';
  }
  const charts = createCharts(S);
  fwlab.chartScale = charts.chartScale;

  async function loadRun(id) {
    const st = await api('GET', `/api/runs/${encodeURIComponent(id)}`);
    if (!st.ok || !st.data) throw new Error(`run ${id}: ${(st.data && st.data.error) || 'not found'} (status ${st.status})`);
    const r = await fetch(`/api/runs/${encodeURIComponent(id)}/trace?format=jsonl`);
    if (!r.ok) throw new Error(`run ${id}: its trace: the server answered ${r.status}`);
    const text = await r.text();
    return { id, status: st.data, text };
  }


  // cellValues finds the sweep cell of each run that has no name: from the
  // sweep named in the URL (?sweep=ID), else from the server's recent
  // sweeps. Returns {runId: {path: value}}.
  let cells = null;
  async function cellValues(runs) {
    if (cells) return cells;
    cells = {};
    const want = new Set(runs.filter((r) => !ownName(r.status)).map((r) => r.id));
    for (const r of runs) {
      const sw = r.status.sweep;
      if (sw && sw.values && typeof sw.values === 'object') {
        cells[r.id] = sw.values;
        want.delete(r.id);
      }
    }
    if (!want.size) return cells;
    const named = new URLSearchParams(location.search).get('sweep');
    let ids = named ? [named] : [];
    if (!ids.length) {
      const list = await api('GET', '/api/sweeps?limit=20').catch(() => null);
      ids = list && list.ok && list.data && Array.isArray(list.data.sweeps) ? list.data.sweeps.map((x) => x.id) : [];
    }
    for (const id of ids) {
      if (!want.size) break;
      const res = await api('GET', `/api/sweeps/${encodeURIComponent(id)}`).catch(() => null);
      for (const c of (res && res.ok && res.data && res.data.cells) || []) {
        if (c.run && want.has(c.run) && c.values && typeof c.values === 'object') {
          cells[c.run] = c.values;
          want.delete(c.run);
        }
      }
    }
    return cells;
  }

  async function load() {
    const got = await Promise.all(
      ids.map((id) =>
        loadRun(id).catch((e) => {
          return { id, error: e.message };
        })
      )
    );
    const bad = got.filter((g) => g.error);
    if (bad.length) showError(bad.map((g) => g.error).join('; '));
    const runs = got.filter((g) => !g.error);
    const [cat, values] = await Promise.all([catalogue().catch(() => ({})), cellValues(runs).catch(() => ({}))]);
    for (const r of runs) {
      r.label = runLabel({ ...r.status, id: r.id }, values[r.id]);
      r.byAlgo = !ownName(r.status) && !values[r.id];
    }
    // A reload starts the traces afresh (the charts' state goes with them).
    const again = S.groups.length > 0;
    S.traces.length = 0;
    S.groups.length = 0;
    // One group per (run, algorithm row); its traces are the replications.
    for (const run of runs) {
      const st = run.status;
      const label = run.label;
      const local = {};
      const seen = {};
      for (const tm of st.traces || []) {
        const tk = tm.algo + '/' + tm.replication;
        const ord = (seen[tk] = (seen[tk] || 0) + 1) - 1;
        const key = run.id + ':' + tm.algo + '#' + ord;
        let g = S.groups.find((x) => x.key === key);
        if (!g) {
          const algo = `${tm.algo}${specRow(st.spec, st.traces, tm, ord).numbered ? ' #' + (ord + 1) : ''}`;
          // A run named by its algorithms: each group by its algorithm and the run's id.
          g = new Group(key, run.byAlgo ? `${algo} · ${run.id}` : `${label} · ${algo}`, COLORS[S.groups.length % COLORS.length]);
          g.run = run.id;
          g.algo = algo;
          g.runLabel = run.byAlgo ? run.id : label;
          S.groups.push(g);
        }
        const t = new Trace({ ...tm, trace: S.traces.length }, false);
        t.group = g;
        g.traces.push(t);
        local[tm.trace] = t;
        S.traces.push(t);
      }
      for (const line of run.text.split('\n')) {
        if (!line.trim()) continue;
        let rec;
        try {
          rec = JSON.parse(line);
        } catch (e) {
          continue;
        }
        const t = local[rec.trace];
        if (t) t.push(rec);
      }
    }
    markIdentical();
    // F − F* only when every run knows the same F*.
    const fs = runs.map((r) => (r.status.info && r.status.info.fstar != null ? r.status.info.fstar : null));
    const one = fs.length && fs.every((f) => f != null && Math.abs(f - fs[0]) <= 1e-12 * Math.max(1, Math.abs(fs[0])));
    S.fstar = one ? fs[0] : null;
    if (!again || (S.objmode === 'fstar' && S.fstar == null)) {
      S.objmode = S.fstar != null ? 'fstar' : 'best';
      $('#objmode').value = S.objmode;
      charts.setObjectiveTitle();
    }
    $('option[value=fstar]', $('#objmode')).disabled = S.fstar == null;
    specTable(runs, cat);
    legend(runs);
    for (const g of S.groups) g.update(() => true);
    if (again) charts.relayout();
    else charts.build();
    charts.drawAll();
    S.perf.draws++;
    page.dataset.status = runs.length >= 2 ? 'ready' : 'missing';
    fwlab.compare.loaded = true;
    fwlab.compare.groups = S.groups.map((g) => ({ key: g.key, run: g.run, label: g.label, color: g.color, n: g.n, reps: g.traces.length }));
    fwlab.traces = S.traces.map((t) => ({ run: t.group.run, algo: t.meta.algo, replication: t.meta.replication, n: t.n, color: t.group.color }));
    fwlab.compare.loads = (fwlab.compare.loads || 0) + 1;
    // Runs still live: load them again in a few seconds.
    if (runs.some((r) => LIVE.has(r.status.status))) setTimeout(() => load().catch((e) => showError(`loading the runs failed: ${e.message}`)), 3000);
  }

  // markIdentical draws once an algorithm whose traces are the same in
  // two or more runs (a baseline both runs ran alike: same records, the
  // time aside), labelled with every run it stands for.
  function markIdentical() {
    const COLS = ['k', 'objective', 'gap', 'passes'];
    const same = (a, b) =>
      a.traces.length === b.traces.length &&
      a.traces.every((ta, i) => {
        const tb = b.traces[i];
        if (ta.n !== tb.n || ta.n === 0) return false;
        return COLS.every((c) => {
          const x = ta.cols[c], y = tb.cols[c];
          if (!x || !y) return x === y;
          for (let j = 0; j < ta.n; j++) if (x[j] !== y[j] && !(x[j] !== x[j] && y[j] !== y[j])) return false;
          return true;
        });
      });
    const kept = [];
    const identical = [];
    for (const g of S.groups) {
      const twin = kept.find((k) => k.algo === g.algo && k.run !== g.run && same(k, g));
      if (!twin) {
        kept.push(g);
        continue;
      }
      twin.twins = (twin.twins || [twin.runLabel]).concat(g.runLabel);
      twin.label = `${twin.algo} · identical in ${twin.twins.join(' and ')}`;
      identical.push([twin.key, g.key]);
    }
    S.groups.splice(0, S.groups.length, ...kept);
    fwlab.compare.identical = identical;
  }

  function legend(runs) {
    $('#legend-algos').replaceChildren(
      ...S.groups.map((g) => el('span', { class: 'legend-algo', 'data-group': g.key }, el('span', { class: 'swatch', style: { background: g.color } }), ` ${g.label}${g.band ? ` · median of ${g.traces.length}` : ''}`))
    );
    $('#compare-runs').replaceChildren(
      ...runs.flatMap((r, i) => [i ? ' · ' : '', el('a', { href: '/runs/' + encodeURIComponent(r.id), text: r.label, title: r.id, 'data-run': r.id }), ` (${r.status.status})`])
    );
  }

  // specTable lays the runs' effective specs side by side (defaults
  // resolved, fields that do not act left out): a highlighted row is a
  // difference that acts on the results.
  function specTable(runs, cat) {
    const specs = runs.map((r) => effectiveSpec(r.status.spec || {}, cat));
    const rows = specDiff(specs);
    const inst = runs.map((r) => r.status.info || r.status.instance || {});
    const instRow = (k, title, f) => {
      const values = inst.map((i) => (i[k] == null ? undefined : i[k]));
      const norm = values.map((v) => String(v));
      return { key: title, values: values.map((v) => (v === undefined ? undefined : f(v))), differ: norm.some((v) => v !== norm[0]), instance: true };
    };
    rows.push(instRow('dim', 'instance: p (variables)', String), instRow('samples', 'instance: n (samples)', String), instRow('blocks', 'instance: q (blocks)', String), instRow('fstar', 'instance: F*', (v) => fmtCell(v, 10)));
    const head = el('tr', {}, el('th', { text: 'parameter' }), ...runs.map((r) => el('th', {}, el('a', { href: '/runs/' + encodeURIComponent(r.id), text: r.label, title: r.id }))));
    $('#spec-diff thead').replaceChildren(head);
    $('#spec-diff tbody').replaceChildren(
      ...rows.map((r) =>
        el(
          'tr',
          { class: r.differ ? 'differ' : '', 'data-key': r.key },
          el('th', { class: 'mono small', text: r.key }),
          ...r.values.map((v) => el('td', { class: 'mono small', text: v === undefined ? '—' : String(v) }))
        )
      )
    );
    fwlab.compare.differ = rows.filter((r) => r.differ).map((r) => r.key);
    fwlab.compare.labels = runs.map((r) => r.label);
    const flagged = differentInstances(runs.map((r) => ({ spec: r.status.spec, instance: r.status.info })));
    fwlab.compare.flagged = flagged;
    const p = $('#compare-flag');
    p.hidden = !flagged;
    p.textContent = flagged ? '⚠ These runs are on different instances (problem, its parameters, seed or size differ): their objectives are not of the same function.' : '';
  }

  // ------------------------------------------------------------ controls
  const redraw = () => {
    charts.drawAll();
    S.perf.draws++;
  };
  bindViewControls(charts, S, redraw);
  bindPNGButtons(charts, S);
  resizeWithWindow(charts, S);

  if (ids.length >= 2)
    load().catch((e) => {
      showError(`loading the runs failed: ${e.message}`);
      page.dataset.status = 'missing';
    });
}
