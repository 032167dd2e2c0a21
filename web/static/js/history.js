// The history page: every stored run newest first (GET /api/runs), with
// filters by problem, algorithm and status, a search over name and note,
// pages (read by cursor: the newest, the next and previous, the oldest; a
// page deep in a long list costs what the first does, and runs written or
// deleted meanwhile move no run across pages), rename/note/star in place
// (PATCH), delete of one or many after a
// confirmation (POST /api/runs/delete), the disk used, a drop zone that
// imports a run bundle (POST /api/runs/import) and Compare of the runs
// selected.

import { $, $$, el, api, postRaw, fwlab } from './util.js';
import { fmtCell } from './format.js';
import { keyParams, finals, fmtBytes } from './lab.js';
import { sweepChoices } from './sweeps.js';
import { fmtDuration, silenceText } from './progress.js';
import { verifiedBadge, outsideBadge } from './verify.js';

const LIMIT = 50;
const LIVE = new Set(['queued', 'running', 'paused']);

// The sweep a run was made for, and its cell's values in words.
function sweepCell(r) {
  const sw = r.sweep;
  if (!sw) return el('td', { class: 'small muted', text: '' });
  return el('td', { class: 'small sweep-ref' }, el('a', { href: '/sweeps/' + encodeURIComponent(sw.id), text: sw.name || sw.id, 'data-sweep': sw.id }), el('div', { class: 'muted', text: sw.text || '' }));
}

// statusCell shows a run's status, and a live run's progress towards its
// limits with the time left at its traces' rates (the server's estimate).
function statusCell(r) {
  const td = el('td', { class: 'progress-cell' }, el('span', { class: 'status st-' + r.status, text: r.status }), verifiedBadge(r.verified), outsideBadge(r.outside));
  if (r.worker) td.append(el('div', { class: 'small muted worker', 'data-worker': r.worker, title: 'the worker process that ran it', text: 'on ' + r.worker }));
  const silent = LIVE.has(r.status) ? silenceText(r.worker, r.worker_beat) : '';
  if (silent) td.append(el('div', { class: 'small error worker-silent', 'data-silent': String(r.worker_beat.age_s), text: silent }));
  const p = r.progress;
  if (p && LIVE.has(r.status)) {
    const pct = `${Math.floor(100 * p.fraction)}%`;
    const left = r.status === 'paused' ? 'paused' : p.eta_s == null ? 'measuring' : `~${fmtDuration(p.eta_s)} left`;
    td.append(el('div', { class: 'small muted mono', 'data-progress': String(p.fraction), title: 'progress towards the run\'s limits; the time left at its traces\' rates' }, el('progress', { max: '1', value: String(p.fraction) }), ` ${pct} · ${left}`));
  }
  return td;
}

export function initHistory() {
  const url = new URLSearchParams(location.search);
  const S = {
    problem: url.get('problem') || '',
    algo: url.get('algo') || '',
    status: url.get('status') || '',
    q: url.get('q') || '',
    sweep: url.get('sweep') || '',
    offset: Math.max(0, parseInt(url.get('offset') || '0', 10) || 0),
    // the page asked for by cursor (the server's prev and next), or the
    // last page; else by offset (an old link, a server without a store)
    after: url.get('after') || '',
    before: url.get('before') || '',
    last: url.get('last') === 'true',
    // pos is the page's place in the list when known (null: a page
    // reached by a link holding a cursor), prev and next the cursors
    pos: null,
    prev: null,
    next: null,
    total: 0,
    rows: [],
    selected: new Set(),
    seq: 0,
  };
  fwlab.history = { loads: 0, rows: [], total: 0, selected: [] };

  const showError = (msg) => {
    const p = $('#history-error');
    p.textContent = msg || '';
    p.hidden = !msg;
  };

  // The filters' choices: the catalogue's problems and algorithms.
  async function catalogue() {
    try {
      const res = await api('GET', '/api/scenarios');
      if (!res.ok || !res.data) return;
      const probs = (res.data.problems || []).map((p) => p.name);
      const algos = (res.data.algorithms || []).map((a) => (typeof a === 'string' ? a : a.name));
      fillSelect($('#f-problem'), probs, S.problem);
      fillSelect($('#f-algo'), algos, S.algo);
    } catch (e) {
      /* the filters keep "any" and the value in the URL */
    }
    sweepChoices($('#f-sweep'), S.sweep);
  }
  function fillSelect(sel, names, value) {
    const have = new Set($$('option', sel).map((o) => o.value));
    for (const n of names) if (!have.has(n)) sel.append(el('option', { value: n, text: n }));
    if (value && !names.includes(value) && !have.has(value)) sel.append(el('option', { value, text: value }));
    sel.value = value;
  }
  fillSelect($('#f-problem'), [], S.problem);
  fillSelect($('#f-algo'), [], S.algo);
  $('#f-status').value = S.status;
  $('#f-q').value = S.q;

  function query() {
    const p = new URLSearchParams();
    if (S.problem) p.set('problem', S.problem);
    if (S.algo) p.set('algo', S.algo);
    if (S.status) p.set('status', S.status);
    if (S.q) p.set('q', S.q);
    if (S.sweep) p.set('sweep', S.sweep);
    if (S.after) p.set('after', S.after);
    else if (S.before) p.set('before', S.before);
    else if (S.last) p.set('last', 'true');
    else if (S.offset) p.set('offset', String(S.offset));
    return p;
  }

  // go moves to a page: first, prev, next or last. With a store the page
  // is read by cursor; without one (runs listed from memory) by offset.
  function go(where) {
    const n = S.rows.length;
    S.after = S.before = '';
    S.last = false;
    if (S.live) {
      S.offset = where === 'first' ? 0 : where === 'prev' ? Math.max(0, S.offset - LIMIT) : where === 'next' ? S.offset + LIMIT : Math.max(0, S.total - (S.total % LIMIT || LIMIT));
    } else if (where === 'first') {
      S.offset = 0;
      S.pos = 0;
    } else if (where === 'prev') {
      S.before = S.prev;
      S.pos = S.pos == null ? null : Math.max(0, S.pos - LIMIT);
    } else if (where === 'next') {
      S.after = S.next;
      S.pos = S.pos == null ? null : S.pos + n;
    } else {
      S.last = true;
      S.pos = null;
    }
    if (!S.live) S.offset = 0;
    load();
  }

  async function load() {
    const seq = ++S.seq;
    const p = query();
    history.replaceState(null, '', '/runs' + (p.toString() ? '?' + p : ''));
    if (!S.after && !S.before && !S.last) p.set('offset', String(S.offset));
    p.set('limit', String(LIMIT));
    let res;
    try {
      res = await api('GET', '/api/runs?' + p);
    } catch (e) {
      if (seq === S.seq) showError(`could not reach the server: ${e.message}`);
      return;
    }
    if (seq !== S.seq) return; // a newer load is under way
    // A server without a run store lists its runs in memory as an array
    // of statuses: shown the same way, filtered and paged here.
    if (res.ok && Array.isArray(res.data)) res.data = fromLive(res.data, S, LIMIT);
    if (!res.ok || !res.data || !Array.isArray(res.data.runs)) {
      showError(`listing the runs failed: ${(res.data && res.data.error) || res.status}`);
      return;
    }
    showError('');
    const d = res.data;
    S.rows = d.runs;
    // Without a store there is nothing to rename, star or delete.
    S.live = !!d.live;
    $('#btn-delete').hidden = S.live;
    S.total = d.total || 0;
    S.prev = d.prev || null;
    S.next = d.next || null;
    if (d.offset != null) S.pos = d.offset;
    if (S.offset >= S.total && S.offset > 0) {
      S.offset = Math.max(0, S.total - (S.total % LIMIT || LIMIT));
      load();
      return;
    }
    // a cursor past the runs deleted since: the last (first) page
    if (!S.rows.length && S.total > 0 && (S.after || S.before)) {
      S.last = !!S.after;
      S.after = S.before = '';
      S.pos = S.last ? null : 0;
      load();
      return;
    }
    const runs = `${S.total.toLocaleString('en')} run${S.total === 1 ? '' : 's'}`;
    $('#disk-used').textContent = d.live ? `${runs} in memory: this server keeps no history` : d.disk_bytes != null ? `${fmtBytes(d.disk_bytes)} on disk · ${runs}` : '';
    render();
    fwlab.history.loads++;
    fwlab.history.total = S.total;
    fwlab.history.rows = S.rows.map((r) => ({ id: r.id, status: r.status, problem: r.problem, algorithms: r.algorithms, name: r.name || '', note: r.note || '', starred: !!r.starred, progress: r.progress || null }));
    document.body.dataset.ready = '1';
    // Runs still live on this page: look again in a few seconds.
    clearTimeout(S.refresh);
    if (S.rows.some((r) => LIVE.has(r.status))) S.refresh = setTimeout(refresh, 3000);
  }

  // refresh reloads the page of runs unless the user is in the middle of
  // something a reload would lose (an edit, a confirmation).
  function refresh() {
    if ($('.edit-name') || !$('#confirm-delete').hidden) {
      S.refresh = setTimeout(refresh, 3000);
      return;
    }
    load();
  }

  function render() {
    const tb = $('#history tbody');
    tb.replaceChildren(...S.rows.map(row));
    $('#history-empty').hidden = S.rows.length > 0;
    const n = S.rows.length;
    const of = S.total.toLocaleString('en');
    $('#page-info').textContent = !S.total ? '' : S.pos == null ? `${n} of ${of}` : `${(S.pos + 1).toLocaleString('en')}–${(S.pos + n).toLocaleString('en')} of ${of}`;
    const atStart = S.live ? S.offset === 0 : !S.prev;
    const atEnd = S.live ? S.offset + n >= S.total : !S.next;
    $('#page-first').disabled = $('#page-prev').disabled = atStart;
    $('#page-next').disabled = $('#page-last').disabled = atEnd;
    fwlab.history.page = { pos: S.pos, prev: S.prev, next: S.next, first: S.rows.length ? S.rows[0].id : null };
    $('#select-all').checked = S.rows.length > 0 && S.rows.every((r) => S.selected.has(r.id));
    selection();
  }

  function row(r) {
    const box = el('input', { type: 'checkbox', class: 'pick', 'aria-label': 'select run ' + r.id });
    box.checked = S.selected.has(r.id);
    box.addEventListener('change', () => {
      box.checked ? S.selected.add(r.id) : S.selected.delete(r.id);
      selection();
    });
    const star = el('button', { type: 'button', class: 'star' + (r.starred ? ' on' : ''), title: r.starred ? 'unstar (a starred run is never trimmed)' : 'star (a starred run is never trimmed)', 'aria-pressed': String(!!r.starred), text: r.starred ? '★' : '☆' });
    star.addEventListener('click', () => patch(r, { starred: !r.starred }));
    const name = el('div', { class: 'run-name' }, el('a', { href: '/runs/' + encodeURIComponent(r.id), text: r.name || r.id }));
    if (r.name) name.append(el('span', { class: 'muted small mono', text: ' ' + r.id }));
    const note = el('div', { class: 'run-note muted small', text: r.note || '' });
    const edit = el('button', { type: 'button', class: 'small edit', text: 'edit', title: 'rename or write a note' });
    edit.addEventListener('click', () => editRow(tr, r));
    const fin = finals(r);
    const objCell = el('td', { class: 'num' }, ...fin.map((f) => el('div', { title: `${f.algo}${f.n > 1 ? `: median of ${f.n}` : ''}`, text: fmtCell(f.objective, 8) })));
    const gapCell = el('td', { class: 'num' }, ...fin.map((f) => el('div', { title: `${f.algo}${f.n > 1 ? `: median of ${f.n}` : ''}`, text: fmtCell(f.gap, 3) })));
    const del = el('button', { type: 'button', class: 'small', text: 'delete' });
    del.addEventListener('click', () => confirmDelete([r.id]));
    const tr = el(
      'tr',
      { 'data-run': r.id, 'data-status': r.status },
      el('td', {}, box),
      el('td', {}, S.live ? null : star),
      el('td', { class: 'run-cell' }, name, note, S.live ? null : edit),
      statusCell(r),
      el('td', { text: r.problem || '' }),
      el('td', {}, ...(r.algorithms || []).map((a) => el('div', { text: a }))),
      el('td', { class: 'params small mono', text: keyParams(r) }),
      sweepCell(r),
      objCell,
      gapCell,
      el('td', { class: 'small', title: r.ended ? 'ended ' + new Date(r.ended).toLocaleString() : '', text: r.created ? new Date(r.created).toLocaleString() : '' }),
      el('td', {}, S.live ? null : del)
    );
    return tr;
  }

  // editRow turns a row's name and note into inputs; Save sends them.
  function editRow(tr, r) {
    const cell = $('.run-cell', tr);
    const name = el('input', { type: 'text', class: 'edit-name', value: r.name || '', placeholder: 'name', maxlength: '200' });
    const note = el('textarea', { class: 'edit-note', rows: '2', placeholder: 'note', maxlength: '10000' });
    note.value = r.note || '';
    const save = el('button', { type: 'button', class: 'small save', text: 'Save' });
    const cancel = el('button', { type: 'button', class: 'small', text: 'Cancel' });
    save.addEventListener('click', () => patch(r, { name: name.value.trim(), note: note.value.trim() }));
    cancel.addEventListener('click', render);
    cell.replaceChildren(el('a', { href: '/runs/' + encodeURIComponent(r.id), class: 'mono small', text: r.id }), name, note, el('div', {}, save, ' ', cancel));
    name.focus();
  }

  async function patch(r, body) {
    const res = await api('PATCH', '/api/runs/' + encodeURIComponent(r.id), body);
    if (!res.ok) {
      showError(`run ${r.id}: ${res.data && res.data.field ? res.data.field + ': ' : ''}${(res.data && res.data.error) || res.status}`);
      return;
    }
    showError('');
    Object.assign(r, body, res.data && res.data.id ? res.data : {});
    render();
    fwlab.history.patched = (fwlab.history.patched || 0) + 1;
  }

  function selection() {
    const n = S.selected.size;
    $('#selection').textContent = n ? `${n} selected` : 'select runs to compare or delete them';
    $('#btn-compare').disabled = n < 2;
    $('#btn-delete').disabled = n < 1;
    fwlab.history.selected = [...S.selected];
  }

  let pending = [];
  function confirmDelete(ids) {
    pending = ids;
    $('#confirm-text').textContent = ids.length === 1 ? `Delete run ${ids[0]} and its records? This cannot be undone.` : `Delete these ${ids.length} runs and their records? This cannot be undone.`;
    $('#confirm-delete').hidden = false;
    $('#confirm-no').focus();
  }
  $('#confirm-no').addEventListener('click', () => {
    pending = [];
    $('#confirm-delete').hidden = true;
  });
  $('#confirm-yes').addEventListener('click', async () => {
    const ids = pending;
    pending = [];
    $('#confirm-delete').hidden = true;
    if (!ids.length) return;
    const res = await api('POST', '/api/runs/delete', { ids });
    if (!res.ok) {
      // A refused id is named by its place in the list: name the run.
      const m = res.data && res.data.field ? /^ids\[(\d+)\]$/.exec(res.data.field) : null;
      const who = m && ids[+m[1]] ? `run ${ids[+m[1]]}: ` : res.data && res.data.field ? res.data.field + ': ' : '';
      showError(`delete: ${who}${(res.data && res.data.error) || res.status}`);
    } else showError('');
    for (const id of ids) S.selected.delete(id);
    fwlab.history.deleted = (fwlab.history.deleted || 0) + ((res.data && res.data.deleted) || 0);
    load();
  });
  $('#btn-delete').addEventListener('click', () => confirmDelete([...S.selected]));
  $('#btn-compare').addEventListener('click', () => {
    location.assign('/compare?runs=' + [...S.selected].map(encodeURIComponent).join(','));
  });
  $('#select-all').addEventListener('change', (ev) => {
    for (const r of S.rows) ev.target.checked ? S.selected.add(r.id) : S.selected.delete(r.id);
    render();
  });

  // Filters: a change reloads from the first page; typing waits a moment.
  const refilter = () => {
    S.problem = $('#f-problem').value;
    S.algo = $('#f-algo').value;
    S.status = $('#f-status').value;
    S.q = $('#f-q').value.trim();
    S.sweep = $('#f-sweep').value;
    S.offset = 0;
    S.after = S.before = '';
    S.last = false;
    S.pos = 0;
    load();
  };
  for (const id of ['#f-problem', '#f-algo', '#f-status', '#f-sweep']) $(id).addEventListener('change', refilter);
  let typing = 0;
  $('#f-q').addEventListener('input', () => {
    clearTimeout(typing);
    typing = setTimeout(refilter, 250);
  });
  $('#history-filter').addEventListener('submit', (ev) => {
    ev.preventDefault();
    refilter();
  });
  $('#page-first').addEventListener('click', () => go('first'));
  $('#page-prev').addEventListener('click', () => go('prev'));
  $('#page-next').addEventListener('click', () => go('next'));
  $('#page-last').addEventListener('click', () => go('last'));

  // --------------------------------------------------------- import

  const zone = $('#drop-zone');
  const status = $('#import-status');
  async function importFile(file) {
    if (!file) return;
    status.className = 'small';
    status.textContent = `importing ${file.name}…`;
    zone.dataset.state = 'importing';
    const res = await postRaw('/api/runs/import', file, { 'Content-Type': 'application/json' });
    const d = res.data || {};
    if (res.status === 201 && d.id) {
      status.replaceChildren(`imported ${file.name} as `, el('a', { href: '/runs/' + encodeURIComponent(d.id), text: d.id, 'data-imported': d.id }));
      zone.dataset.state = 'done';
      fwlab.history.imported = d.id;
      S.offset = 0;
      S.after = S.before = '';
      S.last = false;
      S.pos = 0;
      await load();
      const tr = $(`tr[data-run="${CSS.escape(d.id)}"]`);
      if (tr) tr.classList.add('fresh');
      return;
    }
    status.className = 'small error';
    status.textContent = `${file.name} was refused: ${d.field ? d.field + ': ' : ''}${d.error || `the server answered ${res.status}`}`;
    zone.dataset.state = 'rejected';
    fwlab.history.importError = { field: d.field || '', error: d.error || '', status: res.status };
  }
  zone.addEventListener('dragover', (ev) => {
    ev.preventDefault();
    zone.classList.add('over');
  });
  zone.addEventListener('dragleave', () => zone.classList.remove('over'));
  zone.addEventListener('drop', (ev) => {
    ev.preventDefault();
    zone.classList.remove('over');
    const f = ev.dataTransfer && ev.dataTransfer.files && ev.dataTransfer.files[0];
    importFile(f);
  });
  $('#import-file').addEventListener('change', (ev) => {
    const f = ev.target.files && ev.target.files[0];
    importFile(f).finally(() => (ev.target.value = ''));
  });

  catalogue();
  load();
}

// fromLive turns a server's in-memory run statuses into the store's
// listing: rows newest first, filtered and paged as the store would.
export function fromLive(list, f, limit) {
  const rows = list.map((st) => {
    const spec = st.spec || {};
    return {
      id: st.id,
      name: st.name || '',
      note: st.note || '',
      starred: !!st.starred,
      status: st.status,
      problem: spec.problem || st.problem || '',
      // named as the traces table names them (a variant's "+ slack collapse")
      algorithms: (spec.algorithms || []).map((a, i) => {
        const t = (st.traces || [])[i * Math.max(spec.replications || 1, 1)];
        return t && (t.algo === a.algo || String(t.algo).startsWith(a.algo + ' + ')) ? t.algo : a.algo;
      }),
      created: st.created,
      spec,
      params: { ...(spec.params || {}), replications: spec.replications, iters: spec.iters, seed: spec.seed },
      final: (st.traces || []).map((t) => ({ algo: t.algo, replication: t.replication, objective: t.summary ? t.summary.objective : null, gap: t.summary ? t.summary.gap : null, status: t.status })),
    };
  });
  const q = (f.q || '').toLowerCase();
  const kept = rows
    .filter((r) => (!f.problem || r.problem === f.problem) && (!f.algo || r.algorithms.some((a) => a === f.algo || a.startsWith(f.algo + ' + '))) && (!f.status || r.status === f.status) && (!q || `${r.name} ${r.note}`.toLowerCase().includes(q)))
    .sort((a, b) => String(b.created).localeCompare(String(a.created)));
  return { runs: kept.slice(f.offset, f.offset + limit), total: kept.length, offset: f.offset, limit, disk_bytes: null, live: true };
}
