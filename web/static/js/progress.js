// A run's progress and its estimated time left, from the run's limits
// (iterations, effective passes) and each trace's own rate (its records'
// seconds). Pure functions, no DOM access (tested in the browser harness);
// internal/server/history.go computes the same for the history's rows.

const LIVE = new Set(['running', 'paused', 'queued', '']);

// traceFraction is how far a trace is towards the first limit it will
// reach: k / iters, or passes / passes limit when that is nearer. A trace
// that has ended is complete (it may have stopped early, at its gap).
export function traceFraction(spec, last, status) {
  if (!LIVE.has(status || '')) return 1;
  if (!last) return 0;
  const iters = spec && spec.iters > 0 ? spec.iters : 1000;
  let f = last.k > 0 ? last.k / iters : 0;
  if (spec && spec.passes > 0 && last.passes > 0) f = Math.max(f, last.passes / spec.passes);
  return Math.min(1, Math.max(0, f));
}

// progressOf is a run's progress: the mean fraction of its traces, and the
// seconds left (null while no started trace has a rate): the longest of
// the live traces' own estimates, time_s × (1 − f) / f, plus, for traces
// not started yet, the mean duration of the started ones per free slot
// (taken as one after another: an upper bound).
export function progressOf(spec, traces) {
  if (!traces || !traces.length) return { fraction: 0, eta: null };
  let sum = 0, longest = 0, rated = 0, waiting = 0, total = 0;
  for (const t of traces) {
    const f = traceFraction(spec, t.last, t.status);
    sum += f;
    if (f >= 1) continue;
    const s = t.last && t.last.time_s > 0 ? t.last.time_s : 0;
    if (f > 0 && s > 0) {
      longest = Math.max(longest, (s * (1 - f)) / f);
      total += s / f;
      rated++;
    } else waiting++;
  }
  const fraction = sum / traces.length;
  if (fraction >= 1) return { fraction: 1, eta: 0 };
  if (!rated) return { fraction, eta: null };
  return { fraction, eta: longest + waiting * (total / rated) };
}

// fmtDuration writes seconds as "45 s", "3 min 20 s", "2 h 05 min".
export function fmtDuration(s) {
  if (s == null || !Number.isFinite(s) || s < 0) return '–';
  s = Math.round(s);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`;
}

// wallEta is the time left (seconds) from the run's progress over wall
// time: samples [{t: ms, f: fraction}] in time order, the rate over the
// last 20 s of them (all of them when they span less). null ("measuring")
// until they span 3 s and 2 % of the run. A trace's own seconds count only
// its work, not the time it waited for a worker or a core, so they cannot
// say when the run will end.
export function wallEta(samples, now) {
  if (!samples || samples.length < 2) return null;
  const last = samples[samples.length - 1];
  if (last.f >= 1) return 0;
  let i = 0;
  while (i < samples.length - 2 && last.t - samples[i + 1].t >= 20000) i++;
  const first = samples[i];
  const dt = (last.t - first.t) / 1000, df = last.f - first.f;
  if (dt < 3 || df < 0.02) return null;
  const since = now != null ? Math.max(0, (now - last.t) / 1000) : 0;
  return Math.max(0, ((1 - last.f) * dt) / df - since);
}

// silenceText says that a live run's worker is silent (missed a few
// heartbeats, judged on the database's clock by the server), and when the
// run will be queued again for another worker: "worker w1 silent for 12 s;
// queued again in 18 s". '' while the worker beats (or there is none).
export function silenceText(worker, beat) {
  if (!beat || !beat.silent) return '';
  let t = `worker ${worker || '?'} silent for ${fmtDuration(beat.age_s)}`;
  if (beat.rescue_in_s != null) t += beat.rescue_in_s > 0 ? `; queued again in ${fmtDuration(beat.rescue_in_s)}` : '; being queued again';
  return t;
}
