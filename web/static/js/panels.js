// The problem panels: the instance's data (GFLASSO's true B, the task
// graph and its components with their bounds and oracles; the structural
// SVM data set) and each algorithm's final estimate or decoded words, drawn
// as heat maps, graphs and tables with human names rather than raw keys.

import { $, el, fwlab } from './util.js';
import { fmtCell, COLORS } from './format.js';

const isNum = (x) => typeof x === 'number' && isFinite(x);
function isMatrix(v) {
  return Array.isArray(v) && v.length > 1 && v.every((r) => Array.isArray(r) && r.length === v[0].length && r.length > 0 && r.every(isNum));
}
const isVector = (v) => Array.isArray(v) && v.length > 1 && v.every(isNum);

const TITLES = {
  B_true: 'True coefficients B (rows: features, columns: tasks)',
  B: 'coefficients B',
  corr: 'Task correlations of Y',
  beta_true: 'True β',
};

// NAMES say what an instance's scalar is.
const NAMES = {
  lambda: 'λ, the lasso weight',
  gamma: 'γ, the fusion weight',
  threshold: 'correlation threshold of the task graph',
  hat_bound: 'bounds T_C from the hat matrix (tighter than ½‖Y_C‖²)',
  coef_shape: 'B is (features × tasks)',
  coef_layout: 'blocks',
  features: 'features per letter',
  labels: 'letters in the alphabet',
  train_name: 'training set',
  train_words: 'training words',
  train_letters: 'training letters',
  test_name: 'test set',
  test_words: 'test words',
  test_letters: 'test letters',
  target: 'where the minimiser lies',
  fstar: 'F*',
  offset: 'objective offset',
};

// VALUES say what a scalar's value means, where its text does not.
const VALUES = {
  'coef_layout=component': 'one per connected component of the task graph',
  'coef_layout=row': 'one per (row, component) pair',
};

function figure(name, node, caption) {
  return el('figure', { class: 'panel', 'data-panel': name }, node, el('figcaption', { text: caption }));
}

function heat(name, m, title) {
  const rows = m.length, cols = m[0].length;
  // Cells as wide and as tall as fit about 340 px each way (not square:
  // a tall matrix keeps readable columns).
  const cw = Math.max(3, Math.min(18, Math.floor(340 / cols)));
  const ch = Math.max(3, Math.min(18, Math.floor(340 / rows)));
  const cv = el('canvas', { width: cols * cw + 1, height: rows * ch + 1, 'data-heatmap': name });
  const ctx = cv.getContext('2d');
  let amax = 0;
  for (const r of m) for (const x of r) amax = Math.max(amax, Math.abs(x));
  amax = amax || 1;
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, cv.width, cv.height);
  m.forEach((r, i) =>
    r.forEach((x, j) => {
      const a = Math.min(1, Math.abs(x) / amax);
      ctx.fillStyle = x >= 0 ? `rgba(214,39,40,${a})` : `rgba(31,119,180,${a})`;
      ctx.fillRect(j * cw, i * ch, cw, ch);
    })
  );
  ctx.strokeStyle = '#bbb';
  ctx.strokeRect(0.5, 0.5, cols * cw, rows * ch);
  return figure(name, cv, `${title || TITLES[name] || name}: ${rows} × ${cols}, largest |entry| ${fmtCell(amax, 3)}; red positive, blue negative, white zero`);
}

function bars(name, v) {
  const W = Math.min(480, Math.max(160, v.length * 6)), H = 120;
  const cv = el('canvas', { width: W, height: H, 'data-bars': name });
  const ctx = cv.getContext('2d');
  let amax = 0;
  for (const x of v) amax = Math.max(amax, Math.abs(x));
  amax = amax || 1;
  const bw = W / v.length;
  ctx.strokeStyle = '#999';
  ctx.beginPath();
  ctx.moveTo(0, H / 2);
  ctx.lineTo(W, H / 2);
  ctx.stroke();
  v.forEach((x, i) => {
    ctx.fillStyle = x >= 0 ? '#d62728' : '#1f77b4';
    const h = (Math.abs(x) / amax) * (H / 2 - 2);
    ctx.fillRect(i * bw, x >= 0 ? H / 2 - h : H / 2, Math.max(1, bw - 1), h);
  });
  return figure(name, cv, `${TITLES[name] || name} (${v.length} entries, largest |entry| ${fmtCell(amax, 3)})`);
}

function graph(name, edges, panels) {
  const E = edges.map((e) =>
    Array.isArray(e) ? { a: e[0], b: e[1], w: e.length > 2 ? e[2] : 1 } : { a: e.m != null ? e.m : e.from, b: e.l != null ? e.l : e.to, w: e.r != null ? e.r : e.w != null ? e.w : 1 }
  );
  let n = isMatrix(panels.corr) ? panels.corr.length : 0;
  for (const e of E) n = Math.max(n, e.a + 1, e.b + 1);
  const comp = new Array(n).fill(-1);
  (panels.components || []).forEach((c, ci) => Array.isArray(c) && c.forEach((i) => (comp[i] = ci)));
  const S = 340, cv = el('canvas', { width: S, height: S, 'data-graph': name });
  const ctx = cv.getContext('2d');
  const P = (i) => [S / 2 + 0.42 * S * Math.cos((2 * Math.PI * i) / n), S / 2 + 0.42 * S * Math.sin((2 * Math.PI * i) / n)];
  for (const e of E) {
    const [x0, y0] = P(e.a), [x1, y1] = P(e.b);
    ctx.strokeStyle = e.w >= 0 ? 'rgba(214,39,40,0.55)' : 'rgba(31,119,180,0.55)';
    ctx.lineWidth = 0.5 + 3 * Math.min(1, Math.abs(e.w));
    ctx.beginPath();
    ctx.moveTo(x0, y0);
    ctx.lineTo(x1, y1);
    ctx.stroke();
  }
  ctx.font = '10px sans-serif';
  for (let i = 0; i < n; i++) {
    const [x, y] = P(i);
    ctx.fillStyle = comp[i] >= 0 ? COLORS[comp[i] % COLORS.length] : '#333';
    ctx.beginPath();
    ctx.arc(x, y, 5, 0, 2 * Math.PI);
    ctx.fill();
    ctx.fillStyle = '#333';
    ctx.fillText(String(i), x + 6, y - 4);
  }
  const nc = (panels.components || []).length;
  return figure(name, cv, `Task graph: ${n} tasks, ${E.length} edges (width ∝ |correlation|, red +, blue −)${nc ? `; ${nc} connected components, the blocks of Algorithm 3 (node colours)` : ''}`);
}

// components lists the task graph's components, the blocks of Algorithm 3:
// their tasks, the bound T_C of each epigraph variable and how its oracle
// is computed.
function components(panels) {
  const comps = panels.components || [];
  const bounds = Array.isArray(panels.bounds) ? panels.bounds : [];
  const oracle = Array.isArray(panels.oracle) ? panels.oracle : [];
  const tb = el('tbody');
  const list = (c) => {
    const s = [...c].sort((a, b) => a - b);
    // Consecutive runs of tasks as ranges: 10–19.
    const out = [];
    for (let i = 0; i < s.length; i++) {
      let j = i;
      while (j + 1 < s.length && s[j + 1] === s[j] + 1) j++;
      out.push(j > i + 1 ? `${s[i]}–${s[j]}` : j === i + 1 ? `${s[i]}, ${s[j]}` : `${s[i]}`);
      i = j;
    }
    return out.join(', ');
  };
  const rows = Math.max(comps.length, bounds.length, oracle.length);
  for (let i = 0; i < rows; i++) {
    const c = Array.isArray(comps[i]) ? comps[i] : [];
    tb.append(
      el(
        'tr',
        {},
        el('td', {}, el('span', { class: 'swatch', style: { background: COLORS[i % COLORS.length] } }), ` ${i + 1}`),
        el('td', { class: 'num', text: String(c.length) }),
        el('td', { text: list(c) }),
        el('td', { class: 'num mono', text: bounds[i] != null ? fmtCell(bounds[i], 5) : '–' }),
        el('td', { text: oracle[i] === 'enumerate' ? 'enumerated vertices' : oracle[i] === 'lp' ? 'linear program' : oracle[i] || '–' })
      )
    );
  }
  const t = el(
    'table',
    { class: 'kv components', 'data-components': String(rows) },
    el('thead', {}, el('tr', {}, el('th', { text: 'block' }), el('th', { text: 'tasks' }), el('th', { text: 'which' }), el('th', { text: 'bound T_C' }), el('th', { text: 'oracle' }))),
    tb
  );
  return figure('components', t, `Blocks of Algorithm 3: the ${rows} connected components of the task graph, each with the bound T_C ≥ Ω_C(B*_C) of its epigraph variable and its linear minimisation oracle.`);
}

function words(name, list) {
  const ul = el('ul', { class: 'words', 'data-words': name });
  for (const w of [...new Set(list)].slice(0, 20)) ul.append(el('li', { text: typeof w === 'string' ? w : JSON.stringify(w) }));
  return figure(name, ul, TITLES[name] || name);
}

function table(name, obj, caption) {
  const tb = el('tbody');
  for (const [k, v] of Object.entries(obj))
    tb.append(el('tr', {}, el('th', { text: NAMES[k] || k.replace(/_/g, ' ') }), el('td', { class: 'mono', text: typeof v === 'number' ? fmtCell(v, 6) : typeof v === 'boolean' ? (v ? 'yes' : 'no') : VALUES[`${k}=${v}`] || String(v) })));
  return figure(name, el('table', { class: 'kv', 'data-kv': name }, tb), caption || name);
}

// The final estimates' panels, one entry per algorithm row:
// {label, color, trace, replication, panels}.
let instancePanels = null, results = [];

function estimate(r, name, m) {
  const f = heat(name, m, `Estimated ${TITLES[name] || name} of ${r.label}${r.replication ? `, replication ${r.replication}` : ''}`);
  const cv = $('canvas', f);
  cv.dataset.heatmap = 'estimate';
  cv.dataset.trace = r.trace;
  f.dataset.panel = `${name}@${r.trace}`;
  f.classList.add('estimate');
  f.style.borderTop = `3px solid ${r.color}`;
  return f;
}

// decodedTable shows each distinct test word once, with every algorithm's
// decoding beside it and the wrong letters marked.
function decodedTable(list) {
  const words = [];
  const byWord = new Map();
  for (const r of list) {
    (r.panels.decoded || []).forEach((w) => {
      const truth = String(w.truth || '');
      let row = byWord.get(truth);
      if (!row) {
        row = { truth, count: 0, pred: {} };
        byWord.set(truth, row);
        words.push(row);
      }
      if (!(r.trace in row.pred)) row.pred[r.trace] = w;
      if (r === list[0]) row.count++;
    });
  }
  const head = el('tr', {}, el('th', { text: 'truth' }));
  for (const r of list) head.append(el('th', {}, el('span', { class: 'swatch', style: { background: r.color } }), ` ${r.label}`));
  const tb = el('tbody');
  const totals = list.map(() => ({ errs: 0, letters: 0 }));
  for (const w of words) {
    const tr = el('tr', {}, el('td', { class: 'mono', text: w.truth + (w.count > 1 ? ` ×${w.count}` : '') }));
    list.forEach((r, j) => {
      const p = w.pred[r.trace];
      const td = el('td', { class: 'mono' });
      if (p) {
        const pred = String(p.predicted || '');
        for (let i = 0; i < pred.length; i++) td.append(pred[i] !== w.truth[i] ? el('span', { class: 'wrong', text: pred[i] }) : pred[i]);
        totals[j].errs += p.errors || 0;
        totals[j].letters += w.truth.length;
      } else td.textContent = '–';
      tr.append(td);
    });
    tb.append(tr);
  }
  const t = el('table', { class: 'decoded', 'data-decoded': list.map((r) => r.trace).join(',') }, el('thead', {}, head), tb);
  const summary = list.map((r, j) => `${r.label}: ${totals[j].errs} of ${totals[j].letters} letters wrong`).join('; ');
  return figure('decoded', t, `Decoded test words (distinct words; wrong letters marked). ${summary}`);
}

// COEF_SHOWN is how many of the largest coefficients the table lists.
const COEF_SHOWN = 10;

// coefTable lists a final estimate's largest coefficients by magnitude
// (a vector's entries by index, B's by feature and task), with a link to
// the whole of it as CSV.
function coefTable(r, name, v) {
  const entries = [];
  if (name === 'B') v.forEach((row, j) => row.forEach((x, k) => entries.push({ at: `B[${j + 1}, ${k + 1}]`, x })));
  else v.forEach((x, i) => entries.push({ at: `${i + 1}`, x }));
  const nonzero = entries.filter((e) => e.x !== 0).length;
  const top = entries.slice().sort((a, b) => Math.abs(b.x) - Math.abs(a.x)).slice(0, COEF_SHOWN);
  const tb = el('tbody');
  for (const e of top) tb.append(el('tr', {}, el('td', { class: 'mono', text: e.at }), el('td', { class: 'mono num', text: fmtCell(e.x, 6) })));
  const head = el('tr', {}, el('th', { text: name === 'B' ? 'entry (feature, task)' : 'index' }), el('th', { text: 'value' }));
  const t = el('table', { class: 'coefficients', 'data-coefficients': r.trace }, el('thead', {}, head), tb);
  const link = el('a', { href: r.csv, download: '', class: 'coef-csv', 'data-coef-csv': r.trace, text: `download all ${entries.length} as CSV` });
  const f = figure(`coefficients@${r.trace}`, el('div', {}, t, link),
    `Final coefficients of ${r.label}${r.replication ? `, replication ${r.replication}` : ''}: the ${top.length} largest by magnitude of ${entries.length} (${nonzero} nonzero)`);
  f.classList.add('estimate');
  f.style.borderTop = `3px solid ${r.color}`;
  return f;
}

function resultFigures() {
  const out = [];
  const decoded = [];
  const coefs = []; // after the heat maps, which stay beside the true B
  for (const r of results) {
    for (const [name, v] of Object.entries(r.panels || {})) {
      if (name === 'coefficients' && Array.isArray(v) && v.length && v.every(isNum)) coefs.push(coefTable(r, name, v));
      if (name === 'B' && isMatrix(v)) coefs.push(coefTable(r, name, v));
      if (name === 'coefficients_omitted' && typeof v === 'string')
        coefs.push(figure(`coefficients@${r.trace}`, el('p', { class: 'muted', 'data-coefficients-omitted': r.trace, text: v }), `Final coefficients of ${r.label}`));
      if (isMatrix(v)) out.push(estimate(r, name, v));
      else if (name === 'decoded' && Array.isArray(v)) decoded.push(r);
    }
  }
  if (decoded.length) out.push(decodedTable(decoded));
  return out.concat(coefs);
}

export function setResults(list) {
  results = list || [];
  render(instancePanels);
}

export function render(panels) {
  instancePanels = panels;
  const body = $('#panel-body');
  const kids = [];
  const scalars = {};
  for (const [name, v] of Object.entries(panels || {})) {
    if (['geometry', 'components', 'bounds', 'oracle'].includes(name)) continue;
    if (v == null) continue;
    if (name === 'edges' && Array.isArray(v)) kids.push(graph(name, v, panels));
    else if (isMatrix(v)) kids.push(heat(name, v));
    else if (isVector(v) && name !== 'coef_shape') kids.push(bars(name, v));
    else if (v && typeof v === 'object' && !Array.isArray(v) && Array.isArray(v.edges)) kids.push(graph(name, v.edges, v));
    else if (Array.isArray(v) && v.length && v.every((x) => typeof x === 'string')) kids.push(words(name, v));
    else if (v && typeof v === 'object' && !Array.isArray(v)) {
      const mats = Object.entries(v).filter(([, m]) => isMatrix(m));
      for (const [k, m] of mats) kids.push(heat(`${name} · ${k}`, m));
      const sc = Object.fromEntries(Object.entries(v).filter(([, x]) => typeof x !== 'object'));
      if (Object.keys(sc).length) kids.push(table(name, sc, name === 'ssvm' ? 'The structural SVM data set' : name));
    } else if (typeof v !== 'object') scalars[name] = v;
    else if (name === 'coef_shape' && Array.isArray(v)) scalars[name] = v.join(' × ');
  }
  if (panels && (Array.isArray(panels.components) || Array.isArray(panels.bounds))) kids.push(components(panels));
  if (Object.keys(scalars).length) kids.push(table('instance', scalars, 'The instance'));
  // The estimates go right after the true B (where there is one).
  const est = resultFigures();
  const at = kids.findIndex((k) => k.dataset.panel === 'B_true');
  kids.splice(at >= 0 ? at + 1 : 0, 0, ...est);
  body.replaceChildren(...kids);
  $('#panels').hidden = kids.length === 0;
  fwlab.panels = kids.length;
  fwlab.resultPanels = est.length;
}
