// The run's live stream: the websocket's messages (hello, records, status,
// done), and catching up from the complete trace when records were missed
// or the page opens late.

import { fwlab } from './util.js';

// createStream connects to /ws/runs/{id}; on receives the messages:
// {status(run, hello), records(batches) → false when a gap was found,
// done(run), error(msg), incomplete(info)}. incomplete gets
// {loaded, expected, error} when the page could not load every record the
// server counts (a download cut midway, a damaged store), and null once it
// has them all. The page's own record counts come from S.traces.
export function createStream(S, on) {
  const perf = S.perf;
  let ws = null;

  let broken = false; // the stream closed with 1011: do not reconnect

  function connect() {
    if (broken || (ws && ws.readyState <= 1)) return;
    const sock = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws/runs/${encodeURIComponent(S.runId)}`);
    ws = sock;
    fwlab.wsMessages = fwlab.wsMessages || 0;
    sock.onmessage = (ev) => {
      fwlab.wsMessages++;
      let m;
      const t0 = performance.now();
      try {
        m = JSON.parse(ev.data);
        perf.parseMs += performance.now() - t0;
        perf.bytes += ev.data.length;
      } catch (e) {
        on.error('the server sent a malformed message');
        return;
      }
      if (m.type === 'hello') on.status(m.run, true);
      else if (m.type === 'records') {
        const t1 = performance.now();
        if (!append(m.batches)) catchUp();
        perf.pushMs += performance.now() - t1;
        on.records();
      } else if (m.type === 'status') on.status(m.run, false);
      else if (m.type === 'done') {
        S.done = true;
        on.status(m.run, false);
        finish();
      }
    };
    sock.onclose = (ev) => {
      if (ws !== sock) return;
      ws = null;
      if (S.done) return;
      if (ev.code === 1011) {
        // The server cannot read the run's records: no reconnecting in a
        // loop; the complete trace is tried once and a retry offered.
        broken = true;
        on.error(`the server could not send every record: ${ev.reason || 'internal error'}`);
        catchUp();
      } else if (ev.code === 1013) catchUp();
      else setTimeout(connect, 1000);
    };
  }

  // append adds the new records of each batch; false when a batch starts
  // past the page's last record (records were missed).
  function append(batches) {
    for (const b of batches || []) {
      const t = S.traces[b.trace];
      if (!t) continue;
      // The server's own count for the trace (ahead while catching up).
      if (typeof b.stored === 'number' && S.stored) S.stored[b.trace] = b.stored;
      if (b.from > t.n) return false;
      const recs = b.records || [];
      for (let j = t.n - b.from; j < recs.length; j++) t.push(recs[j]);
    }
    return true;
  }

  // catchUp fetches the complete trace (JSON Lines) and appends what is
  // missing, then follows the stream again.
  // With refill, the records held get the teaching view's metrics they
  // were kept without (the instance's panels came after them).
  async function catchUp(refill) {
    if (S.catchingUp) return;
    S.catchingUp = true;
    on.records();
    let failure = null;
    try {
      const res = await fetch(`/api/runs/${encodeURIComponent(S.runId)}/trace?format=jsonl`);
      if (!res.ok) throw new Error(`trace: ${res.status}`);
      // A download the server aborted midway rejects here: nothing of it
      // is taken for the whole trace.
      const text = await res.text();
      const idx = {};
      for (const line of text.split('\n')) {
        if (!line.trim()) continue;
        const r = JSON.parse(line);
        const t = S.traces[r.trace];
        if (!t) continue;
        const i = (idx[r.trace] = (idx[r.trace] || 0) + 1) - 1;
        if (i >= t.n) t.push(r);
        else if (refill) t.fillExtra(i, r);
      }
    } catch (e) {
      failure = e.message;
      on.error(`fetching the complete trace failed: ${e.message}`);
    } finally {
      S.catchingUp = false;
    }
    on.records();
    checkComplete(failure);
    if (!S.done) connect();
  }

  // counts compares the records the page holds with those the server
  // counts for each trace (its status, or a batch's stored count).
  function counts() {
    let loaded = 0, expected = 0;
    for (const st of (S.status && S.status.traces) || []) {
      const t = S.traces[st.trace];
      if (!t) continue;
      const want = Math.max(st.records || 0, (S.stored && S.stored[st.trace]) || 0);
      loaded += Math.min(t.n, want);
      expected += want;
    }
    return { loaded, expected };
  }

  // checkComplete tells the page whether it holds every record: a failed
  // download, or a finished run with records missing, is incomplete.
  function checkComplete(failure) {
    const c = counts();
    const short = (S.done || broken) && c.loaded < c.expected;
    const info = failure || short ? { ...c, error: failure } : null;
    S.incomplete = info;
    fwlab.traceIncomplete = info;
    on.incomplete(info);
  }

  async function finish() {
    // Every record the status counts must be here; otherwise fetch them.
    const missing = ((S.status && S.status.traces) || []).some((st) => S.traces[st.trace] && S.traces[st.trace].n < st.records);
    if (missing) await catchUp();
    await on.done();
  }

  return { connect, catchUp };
}
