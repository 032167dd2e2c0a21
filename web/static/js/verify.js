// Verification of stored runs: the run page's Verify button and line (a
// re-run of the run's spec through the queue, compared with it once it
// ends: POST /api/runs/{id}/verify, GET /api/runs/{id}/verifications),
// History's badge of a run's latest verification, and the sweep page's
// "Verify every cell" (POST /api/sweeps/{id}/verify).

import { $, el, api } from './util.js';

const LIVE = new Set(['queued', 'running', 'paused', 'loading']);

// verificationText says what a verification found, in words.
export function verificationText(v) {
  if (!v) return 'not verified here';
  const when = new Date(v.at).toLocaleString();
  switch (v.outcome) {
    case 'reproduced':
      return `verified here ${when}: reproduced, ${v.records} records identical`;
    case 'differs':
      return `verified here ${when}: differs — ${v.detail}`;
    default:
      return `verification here ${when} failed: ${v.detail}`;
  }
}

// verifiedBadge is History's mark of a run's latest verification (null
// when it has none).
export function verifiedBadge(v) {
  if (!v) return null;
  const mark = { reproduced: '✓ reproduced', differs: '✗ differs' }[v.outcome] || 'verify failed';
  return el('div', { class: 'verified small v-' + v.outcome, title: verificationText(v) + (v.version ? ` (fwlab ${v.version})` : ''), text: mark });
}

// outsideBadge marks a run opened from outside (docs/live.md): its records
// came from a program fwlab does not run, so it can be compared but not
// re-run.
export function outsideBadge(outside) {
  if (!outside) return null;
  return el('div', { class: 'outside-badge small', title: 'opened from outside: its records came from a program that logged them to the dashboard (docs/live.md); it compares and exports like any run, but cannot be re-run', text: '⇢ opened from outside' });
}

// initVerify wires the run page's Verify control; the returned function
// takes the run's status as it changes (a live run cannot be verified).
export function initVerify(runId) {
  const btn = $('#btn-verify');
  const line = $('#verify-status');
  if (!btn || !line) return () => {};
  const url = `/api/runs/${encodeURIComponent(runId)}`;
  let status = 'loading';
  let pending = null; // the re-run being compared
  let count = 0;

  function show(vs) {
    const v = vs[0];
    line.replaceChildren(verificationText(v));
    line.dataset.outcome = v ? v.outcome : 'none';
    if (v && v.rerun_id) line.append(' (re-run ', el('a', { href: '/runs/' + encodeURIComponent(v.rerun_id), text: v.rerun_id }), ')');
  }
  async function load() {
    const res = await api('GET', url + '/verifications');
    if (!res.ok) return null;
    const vs = res.data.verifications || [];
    if (res.data.verifying && !pending) {
      pending = res.data.verifying; // one in progress, started before this page
      showPending();
      setTimeout(poll, 1000);
    }
    return vs;
  }
  // showPending says which re-run is being compared, with a Cancel button
  // (DELETE /api/runs/{id}/verify cancels the re-run).
  function showPending() {
    const cancel = el('button', { type: 'button', class: 'btn small', id: 'verify-cancel', text: 'Cancel verification' });
    cancel.addEventListener('click', async () => {
      cancel.disabled = true;
      const res = await api('DELETE', url + '/verify');
      if (!res.ok && res.status !== 404) {
        line.textContent = 'cancel: ' + ((res.data && res.data.error) || `the server answered ${res.status}`);
      }
    });
    line.replaceChildren('re-running as run ', el('a', { href: '/runs/' + encodeURIComponent(pending), text: pending }), '; the outcome shows here once it has ended ', cancel);
    line.dataset.outcome = 'pending';
    update();
  }
  async function poll() {
    const vs = await load();
    if (vs && vs.length > count) {
      pending = null;
      count = vs.length;
      show(vs);
      update();
      return;
    }
    if (pending) setTimeout(poll, 1000);
  }
  let outside = false; // a run opened from outside cannot be re-run
  function update() {
    btn.disabled = LIVE.has(status) || pending != null || outside;
    btn.title = outside
      ? 'opened from outside: fwlab cannot re-run it; dashboard verify checks its exported bundle\'s digest'
      : LIVE.has(status)
        ? 'a run can be verified once it has ended'
        : 'Re-run this run here, through the queue, and compare every record with it (time_s aside)';
  }
  btn.addEventListener('click', async () => {
    btn.disabled = true;
    const res = await api('POST', url + '/verify');
    if (!res.ok) {
      line.textContent = 'verify: ' + ((res.data && res.data.error) || `the server answered ${res.status}`);
      line.dataset.outcome = 'error';
      update();
      return;
    }
    pending = res.data.id;
    showPending();
    setTimeout(poll, 1000);
  });
  load().then((vs) => {
    if (!vs) return;
    count = vs.length;
    if (!pending) show(vs);
  });
  update();
  return (s, isOutside) => {
    status = s;
    outside = !!isOutside;
    update();
  };
}

// initSweepVerify wires the sweep page's "Verify every cell" button.
export function initSweepVerify(sweepId) {
  const btn = $('#sweep-verify');
  const line = $('#sweep-verify-status');
  if (!btn || !line) return;
  btn.addEventListener('click', async () => {
    btn.disabled = true;
    const res = await api('POST', `/api/sweeps/${encodeURIComponent(sweepId)}/verify`);
    if (!res.ok) {
      line.textContent = 'verify: ' + ((res.data && res.data.error) || `the server answered ${res.status}`);
      btn.disabled = false;
      return;
    }
    const cancel = el('button', { type: 'button', class: 'btn small', id: 'sweep-verify-cancel', text: 'Cancel verification' });
    cancel.addEventListener('click', async () => {
      cancel.disabled = true;
      const r = await api('DELETE', `/api/sweeps/${encodeURIComponent(sweepId)}/verify`);
      line.textContent = r.ok || r.status === 404 ? 'verification cancelled: the cells verified so far show their outcome' : 'cancel: ' + ((r.data && r.data.error) || `the server answered ${r.status}`);
      btn.disabled = false;
    });
    line.replaceChildren(`verifying ${res.data.cells} cells, one after the other; each cell's run shows its outcome (and History) `, cancel);
  });
}
