// The sweeps' index (GET /api/sweeps): name, problem, axes in words,
// status, cells done and created, newest first; star, rename and note,
// delete (with the cells' runs or without). Also the sweep choice of the
// History's filter, and the run page's line naming its sweep cell.

import { $, el, api, fwlab } from './util.js';

const LIMIT = 50;
const LIVE = new Set(['queued', 'running', 'paused']);

// sweepChoices fills a <select> with the stored sweeps (by name, else id).
export async function sweepChoices(sel, value) {
  if (!sel) return;
  try {
    const res = await api('GET', '/api/sweeps?limit=200');
    const have = new Set(Array.from(sel.options).map((o) => o.value));
    for (const s of (res.ok && res.data && res.data.sweeps) || []) {
      if (!have.has(s.id)) sel.append(el('option', { value: s.id, text: s.name ? `${s.name} (${s.id})` : s.id }));
      have.add(s.id);
    }
    if (value && !have.has(value)) sel.append(el('option', { value, text: value }));
  } catch (e) {
    /* the filter keeps "any" and the value in the URL */
  }
  sel.value = value || '';
}

// axesText: a sweep's axes in words, with their value counts.
export function axesText(s) {
  let axes = [];
  try {
    axes = typeof s.axes === 'string' ? JSON.parse(s.axes) : s.axes || [];
  } catch (e) {
    axes = [];
  }
  return axes.map((a, i) => `${(s.labels && s.labels[i]) || a.param} (${(a.values || []).length})`).join(' × ');
}

export function initSweeps() {
  const S = { offset: 0, total: 0, rows: [], selected: new Set() };
  fwlab.sweeps = { loads: 0, rows: [] };
  const showError = (msg) => {
    const p = $('#sweeps-error');
    p.textContent = msg || '';
    p.hidden = !msg;
  };

  async function load() {
    let res;
    try {
      res = await api('GET', `/api/sweeps?offset=${S.offset}&limit=${LIMIT}`);
    } catch (e) {
      showError(`could not reach the server: ${e.message}`);
      return;
    }
    if (!res.ok || !res.data) {
      showError(`listing the sweeps failed: ${(res.data && res.data.error) || res.status}`);
      return;
    }
    showError('');
    S.rows = res.data.sweeps || [];
    S.total = res.data.total || 0;
    render();
    fwlab.sweeps.loads++;
    fwlab.sweeps.rows = S.rows.map((s) => ({ id: s.id, name: s.name, status: s.status, starred: s.starred, problem: s.problem, axes: axesText(s), done: s.cells_done, total: s.cells_total }));
    clearTimeout(S.timer);
    if (S.rows.some((s) => LIVE.has(s.status))) S.timer = setTimeout(load, 2000);
  }

  function render() {
    $('#sweeps tbody').replaceChildren(...S.rows.map(row));
    $('#sweeps-empty').hidden = S.rows.length > 0;
    $('#sweeps-count').textContent = `${S.total.toLocaleString('en')} sweeps`;
    const last = Math.min(S.total, S.offset + S.rows.length);
    $('#sweeps-page-info').textContent = S.total ? `${S.offset + 1}–${last} of ${S.total}` : '';
    $('#sweeps-prev').disabled = S.offset === 0;
    $('#sweeps-next').disabled = last >= S.total;
    selection();
  }

  function selection() {
    $('#sweeps-delete').disabled = S.selected.size === 0;
    $('#sweeps-selection').textContent = S.selected.size ? `${S.selected.size} selected` : '';
  }

  async function patch(s, body) {
    const res = await api('PATCH', `/api/sweeps/${encodeURIComponent(s.id)}`, body);
    if (!res.ok) showError(`sweep ${s.id}: ${(res.data && (res.data.field ? res.data.field + ': ' : '') + res.data.error) || res.status}`);
    load();
  }

  function row(s) {
    const box = el('input', { type: 'checkbox', class: 'pick', 'aria-label': 'select sweep ' + s.id });
    box.checked = S.selected.has(s.id);
    box.addEventListener('change', () => {
      box.checked ? S.selected.add(s.id) : S.selected.delete(s.id);
      selection();
    });
    const star = el('button', { type: 'button', class: 'star' + (s.starred ? ' on' : ''), 'aria-pressed': String(!!s.starred), title: s.starred ? 'unstar' : 'star', text: s.starred ? '★' : '☆' });
    star.addEventListener('click', () => patch(s, { starred: !s.starred }));
    const name = el('div', { class: 'run-name' }, el('a', { href: '/sweeps/' + encodeURIComponent(s.id), text: s.name || s.id }));
    if (s.name) name.append(el('span', { class: 'muted small mono', text: ' ' + s.id }));
    const note = el('div', { class: 'run-note muted small', text: s.note || '' });
    const edit = el('button', { type: 'button', class: 'small edit', text: 'edit', title: 'rename or write a note' });
    const cell = el('td', { class: 'run-cell' }, name, note, edit);
    edit.addEventListener('click', () => {
      const n = el('input', { type: 'text', class: 'edit-name', value: s.name || '', placeholder: 'name', 'aria-label': 'name' });
      const t = el('input', { type: 'text', class: 'edit-note', value: s.note || '', placeholder: 'note', 'aria-label': 'note' });
      const save = el('button', { type: 'button', class: 'small', text: 'Save' });
      const cancel = el('button', { type: 'button', class: 'small', text: 'Cancel' });
      save.addEventListener('click', () => patch(s, { name: n.value, note: t.value }));
      cancel.addEventListener('click', render);
      cell.replaceChildren(n, t, save, cancel);
      n.focus();
    });
    return el(
      'tr',
      { 'data-sweep': s.id, 'data-status': s.status },
      el('td', {}, box),
      el('td', {}, star),
      cell,
      el('td', { text: s.problem || '' }),
      el('td', { class: 'small', text: axesText(s) }),
      el('td', {}, el('span', { class: 'status st-' + s.status, text: s.status })),
      el('td', { class: 'num', text: `${s.cells_done} of ${s.cells_total}` }),
      el('td', { class: 'small', text: s.created ? new Date(s.created).toLocaleString() : '' })
    );
  }

  $('#sweeps-delete').addEventListener('click', async () => {
    const ids = [...S.selected];
    const runs = $('#sweeps-delete-runs').checked;
    if (!window.confirm(`Delete ${ids.length} sweep${ids.length > 1 ? 's' : ''}${runs ? ' and the runs of their cells' : ' (their runs stay in History)'}?`)) return;
    const res = await api('POST', '/api/sweeps/delete', { ids, runs });
    if (!res.ok) showError(`delete: ${(res.data && (res.data.field ? res.data.field + ': ' : '') + res.data.error) || res.status}`);
    S.selected.clear();
    load();
  });
  $('#sweeps-prev').addEventListener('click', () => {
    S.offset = Math.max(0, S.offset - LIMIT);
    load();
  });
  $('#sweeps-next').addEventListener('click', () => {
    S.offset += LIMIT;
    load();
  });
  load();
}

// runSweepLink puts "cell ρ of ssfw-as = 0.1 of sweep NAME" on a run's
// page when the run is a sweep's cell.
export async function runSweepLink() {
  const page = $('#run-page');
  const id = page && page.dataset.runId;
  if (!id) return;
  let res;
  try {
    res = await api('GET', `/api/runs/${encodeURIComponent(id)}/sweep`);
  } catch (e) {
    return;
  }
  if (!res.ok || !res.data || !res.data.sweep) return;
  const d = res.data;
  const p = el('p', { id: 'run-sweep', class: 'sweep-ref small' }, `cell ${d.text} (${d.index + 1} of ${d.cells}) of sweep `, el('a', { href: '/sweeps/' + encodeURIComponent(d.sweep), text: d.sweep_name || d.sweep }));
  const head = $('.run-head', page) || page.firstElementChild;
  if (head) head.append(p);
  else page.prepend(p);
  fwlab.runSweep = d;
}
