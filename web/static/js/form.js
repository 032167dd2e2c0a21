// The start page: the catalogue's problems and their parameters, the
// algorithm rows with their rules and the m_k preview, presets, the
// instance preview, uploads and submission.

import { $, $$, el, api, postRaw, fwlab } from './util.js';
import { checkParam, checkAlgo, isInt, num, uses, specRule, algoText, algorithm, stepsizeChoices } from './rules.js';
import { scheduleSize, previewSeries, niceTicks } from './schedule.js';
import { fmtNum, plural } from './format.js';
import * as lab from './lab.js';

export function initStart() {
  const cat = JSON.parse($('#catalogue').textContent);
  const problems = {};
  for (const g of cat.groups || []) for (const p of g.problems) problems[p.name] = p;
  const stoch = new Set((cat.algorithms || []).filter((a) => a.stochastic).map((a) => a.name));
  const D = cat.defaults;
  const form = $('#start-form');
  const sel = $('#problem');
  const rows = $('#algo-rows');
  const tmpl = $('#algo-row-template');
  fwlab.catalogue = cat;

  const isBlock = (algo) => !!algorithm(cat, algo).blockwise;

  function fieldset(name) {
    return $(`fieldset[data-problem="${CSS.escape(name)}"]`);
  }

  function showProblem(name, withDefaults) {
    for (const fs of $$('fieldset[data-problem]')) fs.hidden = fs.dataset.problem !== name;
    if (withDefaults) {
      rows.innerHTML = '';
      const p = problems[name];
      // the problem's default limits (the OCR structural SVM runs for
      // passes; the others for the default iterations)
      if (p) {
        $('#run-iters').value = p.iters || D.iters;
        $('#run-passes').value = p.passes || 0;
      }
      const defs = p && p.defaults && p.defaults.length ? p.defaults : p ? [{ algo: p.algorithms[0] }] : [];
      for (const a of defs) addRow(a);
    }
    clearErrors();
    schedulePreview();
  }

  // ------------------------------------------------ instance preview
  // When the problem, its parameters or the seed change, the server
  // builds the instance (POST /api/preview, cached there) and answers its
  // size: p, n, the number of blocks q (which may depend on the data, as
  // GFLASSO's connected components do) and whether F* is known. The
  // summary is shown under the problem, "of q = … blocks" beside every r,
  // and r > q is flagged before submission. A parameter the server
  // refuses shows its message under the field.
  const summary = $('#instance-summary');
  // errAt and errInput: where the last refused preview's message was shown.
  let pv = { key: '', data: null, seq: 0, timer: 0, ctl: null, errAt: null, errInput: null, errMsg: '' };
  fwlab.preview = null;

  // previewRequest returns the body for the form's current values, or
  // null while a parameter or the seed breaks a client-side rule.
  function previewRequest() {
    const p = problems[sel.value];
    if (!p) return null;
    const body = { problem: p.name, params: {}, seed: 0 };
    const fs = fieldset(p.name);
    for (const prm of p.params || []) {
      const c = fs && $(`[name="${CSS.escape(prm.name)}"]`, fs);
      const v = c ? c.value.trim() : prm.default;
      if (checkParam(prm, v)) return null;
      if (v !== prm.default) body.params[prm.name] = v;
    }
    const seed = $('#run-seed').value.trim();
    if (!isInt(seed) || num(seed) < 0) return null;
    body.seed = num(seed);
    return body;
  }

  // knownQ is the number of blocks of the instance the form describes
  // now, or 0 while it is unknown (being built, or the form is invalid).
  function knownQ() {
    const body = previewRequest();
    return pv.data && body && JSON.stringify(body) === pv.key ? pv.data.blocks : 0;
  }

  function setSummary(state, text) {
    summary.dataset.state = state;
    summary.textContent = text;
    summary.classList.toggle('error', state === 'error');
  }

  function clearPreviewError() {
    if (!pv.errAt) return;
    // Only the preview's own message goes; a client-side rule's stays.
    if (pv.errAt.textContent === pv.errMsg) {
      pv.errAt.textContent = '';
      if (pv.errInput) pv.errInput.classList.remove('invalid');
    }
    pv.errAt = pv.errInput = null;
  }

  function refreshRows() {
    for (const row of $$('.algo-row', rows)) updateRow(row);
  }

  // schedulePreview measures the instance again shortly after the last
  // change. An answer still under way, and the error of the last one, are
  // about values that have changed since: the answer is dropped and the
  // error cleared (the new preview shows it again if it still holds), so a
  // stale error never sits under a field the user has just fixed.
  function schedulePreview() {
    clearTimeout(pv.timer);
    if (pv.ctl) {
      pv.ctl.abort();
      pv.ctl = null;
      pv.key = '';
    }
    pv.seq++;
    clearPreviewError();
    pv.timer = setTimeout(runPreview, 300);
  }
  fwlab.schedulePreview = schedulePreview;

  async function runPreview() {
    const body = previewRequest();
    if (!body) {
      if (pv.ctl) pv.ctl.abort();
      setSummary('invalid', 'fix the parameters to see the size of the instance');
      refreshRows();
      return;
    }
    const key = JSON.stringify(body);
    if (key === pv.key && pv.data) {
      showPreview(pv.data);
      return;
    }
    if (pv.ctl) pv.ctl.abort();
    const ctl = (pv.ctl = new AbortController());
    const seq = ++pv.seq;
    pv.key = key;
    pv.data = null;
    setSummary('loading', 'building the instance to measure it…');
    refreshRows();
    let res;
    try {
      const r = await fetch('/api/preview', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: key,
        signal: ctl.signal,
      });
      const text = await r.text();
      let data;
      try {
        data = JSON.parse(text);
      } catch (e) {
        data = { error: text.trim() || `the server answered ${r.status}` };
      }
      res = { status: r.status, data };
    } catch (e) {
      if (e.name === 'AbortError') return;
      res = { status: 0, data: { error: `could not reach the server: ${e.message}` } };
    }
    if (seq !== pv.seq) return; // a newer preview is under way
    pv.ctl = null;
    clearPreviewError();
    const d = res.data || {};
    if (res.status === 200) {
      pv.data = d;
      fwlab.preview = { request: body, answer: d };
      showPreview(d);
      return;
    }
    pv.key = '';
    fwlab.preview = { request: body, error: d.error || '', field: d.field || '', status: res.status };
    const msg = d.error || `the server answered ${res.status}`;
    const field = res.status === 400 ? d.field || '' : '';
    const target = field && $$('[data-error-for]').find((e) => e.dataset.errorFor === field && !e.closest('[hidden]'));
    if (target) {
      target.textContent = msg;
      const input = $$('[data-field]').find((e) => e.dataset.field === field && !e.closest('[hidden]'));
      if (input) input.classList.add('invalid');
      pv.errAt = target;
      pv.errInput = input || null;
      pv.errMsg = msg;
      setSummary('error', `the instance cannot be built: see ${field}`);
    } else {
      setSummary('error', res.status === 400 ? `the instance cannot be built: ${msg}` : `size unknown: ${msg}`);
    }
    refreshRows();
  }

  function showPreview(d) {
    const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;
    setSummary(
      'ok',
      `p = ${plural(d.dim, 'variable', 'variables')} · n = ${plural(d.samples, 'sample', 'samples')} · ` +
        `q = ${plural(d.blocks, 'block', 'blocks')} · F* ${d.fstar != null ? 'known' : 'unknown'}` +
        (d.memory_bytes ? ` · memory ≈ ${lab.fmtBytes(d.memory_bytes)}` : '')
    );
    summary.dataset.q = d.blocks;
    // The instance's own sample count drives the schedule previews (a
    // problem's size parameter, when it has one, only until this arrives).
    if (d.samples >= 1) for (const row of $$('.algo-row', rows)) $('[data-key=preview_n]', row).value = d.samples;
    refreshRows();
  }

  function addRow(a) {
    const p = problems[sel.value];
    if (!p) return;
    if (rows.children.length >= D.max_algorithms) {
      setError('algorithms', `at most ${D.max_algorithms} algorithms per run`);
      return;
    }
    const row = tmpl.content.firstElementChild.cloneNode(true);
    // Fields without a control (spg's mu and eps, workers, …) ride along.
    const keep = {};
    for (const k of ['workers', 'caratheodory', 'mu', 'eps', 'no_average', 'slack']) if (a && a[k]) keep[k] = a[k];
    row.dataset.keep = JSON.stringify(keep);
    const algoSel = $('[data-key=algo]', row);
    for (const name of p.algorithms) algoSel.append(el('option', { value: name, text: algoText(name, cat) }));
    const stepSel = $('[data-key=stepsize]', row);
    for (const c of stepsizeChoices(cat, D.stepsize)) stepSel.append(el('option', c));
    a = a || {};
    algoSel.value = a.algo && p.algorithms.includes(a.algo) ? a.algo : p.algorithms[0];
    const set = (k, v) => {
      const c = $(`[data-key=${k}]`, row);
      if (c && v != null && v !== '') c.value = v;
    };
    set('stepsize', a.stepsize || algorithm(cat, algoSel.value).stepsize || D.stepsize);
    set('L', a.L || 'auto');
    set('schedule', a.schedule && a.schedule !== 'full' ? a.schedule : stoch.has(algoSel.value) ? D.schedule : 'full');
    set('rho', a.rho || D.rho);
    set('alpha', a.alpha || D.alpha);
    set('m0', a.m0 || D.m0);
    set('growth', a.growth || D.growth);
    set('r', a.r || 0);
    const known = pv.data && pv.data.samples >= 1 && fwlab.preview && fwlab.preview.request.problem === p.name;
    const n = known ? pv.data.samples : previewN(p);
    if (n) set('preview_n', n);
    $('.remove-algo', row).addEventListener('click', () => {
      row.remove();
      renumber();
    });
    row.addEventListener('input', () => updateRow(row));
    row.addEventListener('change', () => updateRow(row));
    rows.append(row);
    renumber();
    updateRow(row);
    if (a.algo && !p.algorithms.includes(a.algo))
      setError(`algorithms[${row.dataset.index}].algo`, `${a.algo} does not apply to problem ${p.name} (use one of ${p.algorithms.join(', ')})`);
  }

  // A parameter naming the sample count, if the problem has one, sets the
  // preview's n.
  function previewN(p) {
    const fs = fieldset(p.name);
    for (const name of ['n', 'samples', 'm', 'rows']) {
      const c = fs && $(`[name="${name}"]`, fs);
      if (c && isInt(c.value)) return c.value;
    }
    return '';
  }

  function renumber() {
    $$('.algo-row', rows).forEach((row, i) => {
      row.dataset.index = i;
      for (const c of $$('[data-key]', row)) c.dataset.field = `algorithms[${i}].${c.dataset.key}`;
      for (const e of $$('[data-error-key]', row)) e.dataset.errorFor = `algorithms[${i}].${e.dataset.errorKey}`;
    });
  }

  function readRow(row) {
    const v = (k) => $(`[data-key=${k}]`, row).value.trim();
    const a = { algo: v('algo'), stepsize: v('stepsize'), L: v('L') || 'auto', keep: JSON.parse(row.dataset.keep || '{}') };
    const s = stoch.has(a.algo);
    if (s) {
      a.schedule = v('schedule');
      a.rawRho = v('rho');
      a.rawAlpha = v('alpha');
      a.rawM0 = v('m0');
      a.rawGrowth = v('growth');
      a.rho = num(a.rawRho);
      a.alpha = num(a.rawAlpha);
      a.m0 = num(a.rawM0);
      a.growth = num(a.rawGrowth);
    } else a.schedule = 'full';
    if (isBlock(a.algo)) {
      a.rawR = v('r');
      a.r = num(a.rawR);
    }
    return a;
  }

  function specAlgo(a) {
    const o = Object.assign({ algo: a.algo, ...specRule(a, cat), schedule: a.schedule }, a.keep || {});
    if (stoch.has(a.algo)) {
      if (a.schedule === 'paper') Object.assign(o, { rho: a.rho, alpha: a.alpha });
      if (a.schedule === 'constant' || a.schedule === 'geometric') o.m0 = a.m0;
      if (a.schedule === 'geometric') o.growth = a.growth;
    }
    if (isBlock(a.algo) && a.r) o.r = a.r;
    return o;
  }

  function updateRow(row) {
    const a = readRow(row);
    const s = stoch.has(a.algo);
    const use = uses(a.algo, s, sel.value, cat);
    for (const e of $$('[data-stochastic]', row)) e.hidden = !s;
    for (const e of $$('[data-sched]', row)) e.hidden = !s || !e.dataset.sched.split(' ').includes(a.schedule);
    for (const e of $$('[data-blocks]', row)) e.hidden = !isBlock(a.algo);
    for (const e of $$('[data-uses]', row)) e.hidden = !use[e.dataset.uses];
    const own = $('[data-own-step]', row);
    if (own) {
      own.hidden = use.stepsize || use.L;
      const how = algorithm(cat, a.algo).own_step;
      own.textContent = `${how ? `${a.algo} ${how}` : 'The structural SVM problems set the step of every method'}: no stepsize or L applies.`;
    }
    const errs = checkAlgo(a, s, knownQ(), use, cat);
    for (const e of $$('[data-error-key]', row)) e.textContent = errs[e.dataset.errorKey] || '';
    const rIn = $('[data-key=r]', row);
    if (rIn) rIn.classList.toggle('invalid', !!errs.r);
    const qOf = $('[data-q-of]', row);
    if (qOf) qOf.textContent = knownQ() > 0 ? `of q = ${knownQ()} ${knownQ() === 1 ? 'block' : 'blocks'}` : '';
    if (s) drawPreview(row, a, errs);
  }

  // drawPreview draws m_k against k with axes; hovering reads m_k.
  function drawPreview(row, a, errs) {
    const cv = $('.sched-preview', row);
    const cap = $('.preview-caption', row);
    const ctx = cv.getContext('2d');
    ctx.clearRect(0, 0, cv.width, cv.height);
    const n = num($('[data-key=preview_n]', row).value);
    if (Object.keys(errs).length || !(n >= 1)) {
      cap.textContent = 'fix the schedule parameters to see m_k';
      cv._preview = null;
      return;
    }
    const sched = { kind: a.schedule, rho: a.rho, alpha: a.alpha, m0: a.m0, growth: a.growth };
    const { K, m } = previewSeries(sched, n, 400);
    const box = { l: 46, r: 8, t: 8, b: 30 };
    const W = cv.width - box.l - box.r, H = cv.height - box.t - box.b;
    const X = (k) => box.l + ((k - 1) / Math.max(1, K - 1)) * W;
    const Y = (v) => box.t + H - (v / n) * H;
    ctx.font = '10px sans-serif';
    ctx.strokeStyle = '#ddd';
    ctx.fillStyle = '#555';
    ctx.lineWidth = 1;
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    for (const v of niceTicks(0, n, 3)) {
      ctx.beginPath();
      ctx.moveTo(box.l, Y(v));
      ctx.lineTo(box.l + W, Y(v));
      ctx.stroke();
      ctx.fillText(fmtNum(v), box.l - 4, Y(v));
    }
    ctx.textAlign = 'center';
    ctx.textBaseline = 'top';
    for (const k of niceTicks(1, K, 5)) {
      if (k < 1) continue;
      ctx.beginPath();
      ctx.moveTo(X(k), box.t + H);
      ctx.lineTo(X(k), box.t + H + 3);
      ctx.stroke();
      ctx.fillText(String(k), X(k), box.t + H + 4);
    }
    ctx.fillText('iteration k', box.l + W / 2, box.t + H + 16);
    ctx.save();
    ctx.translate(12, box.t + H / 2);
    ctx.rotate(-Math.PI / 2);
    ctx.fillText('m_k', 0, -6);
    ctx.restore();
    ctx.strokeStyle = '#555';
    ctx.strokeRect(box.l, box.t, W, H);
    ctx.strokeStyle = '#1f77b4';
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    m.forEach((v, i) => (i ? ctx.lineTo(X(i + 1), Y(v)) : ctx.moveTo(X(i + 1), Y(v))));
    ctx.stroke();
    const text = `m_k for k = 1…${K} (n = ${n}): m_1 = ${m[0]}, m_${K} = ${m[K - 1]}; hover to read`;
    cap.textContent = text;
    row.dataset.previewK = K;
    cv._preview = { K, m, n, box, W, H, text };
    // a redraw under the pointer (a changed field, the instance's answer)
    // keeps the readout, of the new series
    if (cv._hoverX != null) readPreview(cv);
    else redrawMarker(cv, null);
    if (!cv._hover) {
      cv._hover = true;
      cv.addEventListener('mousemove', (ev) => hoverPreview(cv, ev));
      cv.addEventListener('mouseleave', () => {
        cv._hoverX = null;
        if (cv._preview) $('.preview-caption', cv.closest('.algo-row')).textContent = cv._preview.text;
        redrawMarker(cv, null);
      });
    }
  }

  function hoverPreview(cv, ev) {
    const r = cv.getBoundingClientRect();
    cv._hoverX = ((ev.clientX - r.left) * cv.width) / r.width;
    readPreview(cv);
  }

  // readPreview shows m_k at the pointer's k (cv._hoverX, in the canvas'
  // pixels).
  function readPreview(cv) {
    const P = cv._preview;
    if (!P) return;
    const x = cv._hoverX;
    const k = Math.max(1, Math.min(P.K, Math.round(1 + ((x - P.box.l) / P.W) * (P.K - 1))));
    const row = cv.closest('.algo-row');
    $('.preview-caption', row).textContent = `k = ${k}: m_k = ${P.m[k - 1]} of n = ${P.n} (${+((100 * P.m[k - 1]) / P.n).toPrecision(3)}%)`;
    redrawMarker(cv, k);
    fwlab.previewHover = { k, m: P.m[k - 1] };
  }

  // redrawMarker draws the hover marker on a canvas laid over the preview,
  // so that the preview itself is drawn once.
  function redrawMarker(cv, k) {
    let ov = cv._overlay;
    if (!ov) {
      ov = cv._overlay = el('canvas', { class: 'sched-overlay', width: cv.width, height: cv.height });
      cv.parentNode.insertBefore(ov, cv.nextSibling);
    }
    const ctx = ov.getContext('2d');
    ctx.clearRect(0, 0, ov.width, ov.height);
    const P = cv._preview;
    if (!P || k == null) return;
    const x = P.box.l + ((k - 1) / Math.max(1, P.K - 1)) * P.W, y = P.box.t + P.H - (P.m[k - 1] / P.n) * P.H;
    ctx.strokeStyle = 'rgba(0,0,0,0.35)';
    ctx.beginPath();
    ctx.moveTo(x, P.box.t);
    ctx.lineTo(x, P.box.t + P.H);
    ctx.stroke();
    ctx.fillStyle = '#d62728';
    ctx.beginPath();
    ctx.arc(x, y, 3.5, 0, 2 * Math.PI);
    ctx.fill();
  }

  function clearErrors() {
    for (const e of $$('.err')) e.textContent = '';
    for (const e of $$('.invalid')) e.classList.remove('invalid');
    showSummary([]);
  }

  // showSummary lists the form's errors beside the Start button; each
  // entry scrolls to its field.
  function showSummary(errs) {
    const box = $('#error-summary');
    if (!box) return;
    box.replaceChildren();
    box.hidden = !errs.length;
    if (!errs.length) return;
    box.append(el('strong', { text: `${plural(errs.length, 'field needs', 'fields need')} fixing: ` }));
    errs.slice(0, 6).forEach(([f, m], i) => {
      if (i) box.append(' · ');
      box.append(el('a', { href: '#', 'data-goto': f, text: `${labelOf(f)}: ${m}`, onclick: (ev) => (ev.preventDefault(), goTo(f)) }));
    });
    if (errs.length > 6) box.append(` · and ${errs.length - 6} more`);
  }

  // labelOf names a field as the form labels it.
  function labelOf(f) {
    const input = fieldInput(f);
    const lab = input && input.closest('label') && $('.label', input.closest('label'));
    const m = /^algorithms\[(\d+)\]/.exec(f);
    const name = lab ? lab.textContent.trim() : f;
    return m ? `algorithm ${+m[1] + 1}, ${name}` : name;
  }

  function fieldInput(f) {
    return $$('[data-field]').find((e) => e.dataset.field === f && !e.closest('[hidden]')) || null;
  }

  // goTo scrolls a field into view (centred, clear of the sticky Start
  // bar) and focuses it.
  function goTo(f) {
    const input = fieldInput(f) || $$('[data-error-for]').find((e) => e.dataset.errorFor === f && !e.closest('[hidden]'));
    if (!input) return;
    input.scrollIntoView({ block: 'center' });
    if (input.focus) input.focus({ preventScroll: true });
    fwlab.scrolledTo = f;
  }


  function setError(field, msg) {
    const target = $$('[data-error-for]').find((e) => e.dataset.errorFor === field);
    const input = $$('[data-field]').find((e) => e.dataset.field === field && !e.closest('[hidden]'));
    if (input) input.classList.add('invalid');
    if (target && !target.closest('[hidden]')) target.textContent = msg;
    else $('#form-error').textContent = `${field ? field + ': ' : ''}${msg}`;
  }

  // collect builds the spec from the form and checks every rule it can.
  function collect() {
    const errs = [];
    const p = problems[sel.value];
    if (!p) {
      errs.push(['problem', 'is required']);
      return { errs };
    }
    const spec = { problem: p.name, params: {}, algorithms: [] };
    const fs = fieldset(p.name);
    for (const prm of p.params || []) {
      const c = $(`[name="${CSS.escape(prm.name)}"]`, fs);
      const v = c ? c.value.trim() : prm.default;
      const e = checkParam(prm, v);
      if (e) errs.push(['params.' + prm.name, e]);
      if (v !== prm.default) spec.params[prm.name] = v;
    }
    const rowEls = $$('.algo-row', rows);
    if (!rowEls.length) errs.push(['algorithms', 'at least one algorithm is required']);
    rowEls.forEach((row, i) => {
      const a = readRow(row);
      const ae = checkAlgo(a, stoch.has(a.algo), knownQ(), uses(a.algo, stoch.has(a.algo), p.name, cat), cat);
      for (const [k, m] of Object.entries(ae)) errs.push([`algorithms[${i}].${k}`, m]);
      spec.algorithms.push(specAlgo(a));
    });
    const run = (name) => $('#run-' + name).value.trim();
    const intField = (name, lo, hi, rule) => {
      const raw = run(name);
      const v = num(raw);
      if (!isInt(raw) || v < lo || v > hi) errs.push([name, `${rule}, got ${raw === '' ? '""' : raw}`]);
      return v;
    };
    spec.seed = intField('seed', 0, Number.MAX_SAFE_INTEGER, 'must be non-negative');
    spec.replications = intField('replications', 1, D.max_replications, `must be between 1 and ${D.max_replications}`);
    spec.iters = intField('iters', 1, D.max_iters, `must be between 1 and ${D.max_iters}`);
    spec.eval_every = intField('eval_every', 0, Number.MAX_SAFE_INTEGER, "must be at least 1 (or 0 for the problem's default cadence)");
    for (const [name, rule] of [
      ['passes', 'must be a non-negative number (0: no limit)'],
      ['gap', 'must be a non-negative number (0: no gap test)'],
    ]) {
      const raw = run(name);
      const v = num(raw);
      if (!(v >= 0)) errs.push([name, `${rule}, got ${raw === '' ? '""' : raw}`]);
      spec[name] = v;
    }
    const sp = $('#run-start_paused');
    if (sp && sp.checked) spec.start_paused = true;
    if (!Object.keys(spec.params).length) delete spec.params;
    return { spec, errs };
  }
  fwlab.collectSpec = () => collect();

  function fill(spec) {
    if (!spec || !problems[spec.problem]) return false;
    sel.value = spec.problem;
    showProblem(spec.problem, false);
    const fs = fieldset(spec.problem);
    for (const prm of problems[spec.problem].params || []) {
      const c = $(`[name="${CSS.escape(prm.name)}"]`, fs);
      if (c) c.value = spec.params && spec.params[prm.name] != null ? String(spec.params[prm.name]) : prm.default;
    }
    rows.innerHTML = '';
    for (const a of spec.algorithms || []) addRow(a);
    const setRun = (name, v, dflt) => ($('#run-' + name).value = v != null && v !== 0 ? v : dflt);
    setRun('seed', spec.seed, 0);
    setRun('replications', spec.replications, 1);
    setRun('iters', spec.iters, D.iters);
    setRun('passes', spec.passes, 0);
    setRun('gap', spec.gap, 0);
    setRun('eval_every', spec.eval_every, D.eval_every);
    const sp = $('#run-start_paused');
    if (sp) sp.checked = !!spec.start_paused;
    return true;
  }
  fwlab.fillSpec = fill;

  // File pickers of path parameters: the chosen file is uploaded
  // (POST /api/uploads), checked by the server, and its stored path fills
  // the text field; a rejected file shows the server's error under it.
  // serverError is the server's refusal of the last Start, about the data
  // as they were then: a new file makes it stale, so a good upload clears
  // it from the Start bar and under its field (Start asks again).
  let serverError = null;
  function clearServerError() {
    if (!serverError) return;
    const { field, msg } = serverError;
    serverError = null;
    const target = $$('[data-error-for]').find((e) => e.dataset.errorFor === field);
    if (target && target.textContent === msg) target.textContent = '';
    const input = fieldInput(field);
    if (input) input.classList.remove('invalid');
    if (msg && $('#form-error').textContent.endsWith(msg)) $('#form-error').textContent = '';
    showSummary([]);
  }

  async function uploadFile(input) {
    const field = input.dataset.uploadField;
    const text = document.getElementById(input.dataset.uploadFor);
    const status = $$('[data-upload-status]').find((e) => e.dataset.uploadStatus === field);
    const target = $$('[data-error-for]').find((e) => e.dataset.errorFor === field);
    const file = input.files && input.files[0];
    if (!file || !text) return;
    if (target) target.textContent = '';
    text.classList.remove('invalid');
    if (status) status.textContent = `uploading ${file.name}…`;
    input.dataset.state = 'uploading';
    const fd = new FormData();
    if (input.dataset.format) fd.append('format', input.dataset.format);
    fd.append('file', file, file.name);
    const res = await postRaw('/api/uploads', fd);
    input.value = '';
    const d = res.data || {};
    if (res.status === 201 && d.path) {
      text.value = d.path;
      text.dispatchEvent(new Event('input', { bubbles: true }));
      if (status) status.textContent = `uploaded ${d.name}: ${d.rows} × ${d.cols} (${d.bytes} bytes)`;
      input.dataset.state = 'done';
      clearServerError();
      return;
    }
    if (status) status.textContent = '';
    const msg = d.error || `the server answered ${res.status}`;
    if (target) target.textContent = msg;
    else $('#form-error').textContent = `${field}: ${msg}`;
    text.classList.add('invalid');
    input.dataset.state = 'rejected';
  }
  for (const input of $$('input.upload')) input.addEventListener('change', () => uploadFile(input));

  sel.addEventListener('change', () => showProblem(sel.value, true));
  $('#add-algo').addEventListener('click', () => addRow(null));
  for (const b of $$('[data-preset]')) {
    b.addEventListener('click', () => {
      const pr = (cat.presets || []).find((x) => x.name === b.dataset.preset);
      if (!pr) return;
      if (!fill(pr.spec)) {
        $('#form-error').textContent = `preset ${pr.name}: its problem ${pr.spec.problem} is not registered`;
        return;
      }
      for (const o of $$('[data-preset]')) o.classList.toggle('chosen', o === b);
      $('#form-error').textContent = '';
    });
  }
  form.addEventListener('change', (ev) => {
    const f = ev.target.dataset && ev.target.dataset.field;
    if (f && (f.startsWith('params.') || f === 'seed')) schedulePreview();
  });
  form.addEventListener('input', (ev) => {
    const f = ev.target.dataset && ev.target.dataset.field;
    if (!f) return;
    if (f.startsWith('params.') || f === 'seed') schedulePreview();
    // The sample-count parameter drives the schedule previews.
    const p = problems[sel.value];
    if (p && f.startsWith('params.') && previewN(p) === ev.target.value.trim() && ev.target.value.trim() !== '') {
      for (const row of $$('.algo-row', rows)) {
        $('[data-key=preview_n]', row).value = ev.target.value.trim();
        updateRow(row);
      }
    }
    ev.target.classList.remove('invalid');
    const { errs } = collect();
    const mine = errs.find(([k]) => k === f);
    const target = $$('[data-error-for]').find((e) => e.dataset.errorFor === f);
    if (target) target.textContent = mine ? mine[1] : '';
    if (mine) ev.target.classList.add('invalid');
  });
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    clearErrors();
    const { spec, errs } = collect();
    if (errs.length) {
      for (const [f, m] of errs) setError(f, m);
      showSummary(errs);
      goTo(errs[0][0]);
      return;
    }
    const btn = $('#start-run');
    btn.disabled = true;
    try {
      const res = await api('POST', '/api/runs', spec);
      if (res.status === 201 && res.data && res.data.id) {
        location.assign(`/runs/${encodeURIComponent(res.data.id)}?spec=${encodeURIComponent(JSON.stringify(spec))}`);
        return;
      }
      const d = res.data || {};
      setError(d.field || '', d.error || `the server answered ${res.status}`);
      showSummary([[d.field || 'run', d.error || `the server answered ${res.status}`]]);
      serverError = { field: d.field || '', msg: d.error || '' };
      if (d.field) goTo(d.field);
    } catch (e) {
      setError('', `could not reach the server: ${e.message}`);
    } finally {
      btn.disabled = false;
    }
  });

  // ------------------------------------------------ sweep a parameter
  // The parameters a sweep can vary: the form's numeric controls in
  // view, named by their spec path (params.NAME, algorithms[i].FIELD, or a
  // run-level field).
  const SWEEPABLE_RUN = new Set(['seed', 'iters', 'passes', 'gap', 'eval_every']);
  function sweepParams() {
    const out = [];
    for (const e of $$('[data-field]', form)) {
      const f = e.dataset.field;
      if (e.closest('[hidden]') || e.closest('template')) continue;
      let kind = '';
      if (f.startsWith('params.')) {
        const k = e.dataset.kind || (e.type === 'number' ? (e.step === '1' ? 'int' : 'float') : '');
        if (k === 'int' || k === 'float') kind = k;
      } else if (/^algorithms\[\d+\]\.(rho|alpha|m0|growth|r)$/.test(f)) {
        kind = /\.(m0|r)$/.test(f) ? 'int' : 'float';
      } else if (/^algorithms\[\d+\]\.L$/.test(f)) {
        kind = 'L'; // numbers, or auto
      } else if (/^algorithms\[\d+\]\.(algo|stepsize|schedule)$/.test(f)) {
        kind = 'text'; // names: algorithms, step rules, schedules
      } else if (/^algorithms\[\d+\]\.(caratheodory|no_average)$/.test(f)) {
        kind = 'bool';
      } else if (SWEEPABLE_RUN.has(f)) {
        kind = f === 'passes' || f === 'gap' ? 'float' : 'int';
      }
      if (kind) out.push({ path: f, kind, label: labelOf(f) });
    }
    return out;
  }
  function fillSweepParams() {
    const ps = sweepParams();
    for (const i of [0, 1]) {
      const sel = $(`#sweep-param-${i}`);
      const keep = sel.value;
      sel.replaceChildren(el('option', { value: '', text: i === 0 ? 'choose a parameter…' : 'none' }), ...ps.map((p) => el('option', { value: p.path, 'data-kind': p.kind, text: `${p.label} (${p.path})` })));
      if (ps.some((p) => p.path === keep)) sel.value = keep;
    }
    sweepCount();
  }
  function sweepAxes() {
    const axes = [], errs = [];
    for (const i of [0, 1]) {
      const sel = $(`#sweep-param-${i}`);
      const text = $(`#sweep-values-${i}`).value;
      if (!sel.value) {
        if (i === 0) errs.push([`axes[0]`, 'choose the parameter to sweep']);
        continue;
      }
      const opt = sel.selectedOptions[0];
      const r = lab.parseValues(text, opt ? opt.dataset.kind : 'float');
      if (r.error) errs.push([`axes[${i}]`, `values: ${r.error}`]);
      else axes.push({ param: sel.value, values: r.values });
    }
    if (axes.length === 2 && axes[0].param === axes[1].param) errs.push(['axes[1]', 'choose a parameter other than the first']);
    return { axes, errs };
  }
  function sweepCount() {
    const { axes, errs } = sweepAxes();
    const reps = +($('#run-replications') && $('#run-replications').value) || 1;
    const cells = axes.reduce((a, x) => a * x.values.length, axes.length ? 1 : 0);
    $('#sweep-count').textContent = !errs.length && cells ? `${plural(cells, 'cell', 'cells')} × ${plural(reps, 'replication', 'replications')} = ${plural(cells * reps, 'run', 'runs')} of every algorithm` : '';
  }
  // The choice follows the form: filled when opened, and again when the
  // problem or the algorithm rows change.
  $('#sweep-card').addEventListener('toggle', () => $('#sweep-card').open && fillSweepParams());
  new MutationObserver(() => $('#sweep-card').open && fillSweepParams()).observe(rows, { childList: true });
  for (const i of [0, 1]) {
    $(`#sweep-param-${i}`).addEventListener('change', sweepCount);
    $(`#sweep-values-${i}`).addEventListener('input', () => {
      const t = $$('[data-error-for]').find((e) => e.dataset.errorFor === `axes[${i}]`);
      if (t) t.textContent = '';
      sweepCount();
    });
  }
  sel.addEventListener('change', () => $('#sweep-card').open && fillSweepParams());
  $('#start-sweep').addEventListener('click', async () => {
    clearErrors();
    const sweepErr = (f, m) => {
      const t = $$('[data-error-for]').find((e) => e.dataset.errorFor === f);
      (t || $('#sweep-error')).textContent = t ? m : `${f}: ${m}`;
    };
    const { spec, errs } = collect();
    if (errs.length) {
      for (const [f, m] of errs) setError(f, m);
      showSummary(errs);
      goTo(errs[0][0]);
      sweepErr('sweep', 'fix the form first: the sweep varies its spec');
      return;
    }
    const ax = sweepAxes();
    if (ax.errs.length) {
      for (const [f, m] of ax.errs) sweepErr(f, m);
      return;
    }
    const btn = $('#start-sweep');
    btn.disabled = true;
    try {
      const body = lab.sweepBody(spec, ax.axes);
      fwlab.sweepRequest = body;
      const res = await api('POST', '/api/sweeps', body);
      if (res.status === 201 && res.data && res.data.id) {
        location.assign(`/sweeps/${encodeURIComponent(res.data.id)}`);
        return;
      }
      const d = res.data || {};
      const f = d.field || '';
      const m = /^axes\[(\d)\]/.exec(f);
      if (m) sweepErr(`axes[${m[1]}]`, `${f}: ${d.error || res.status}`);
      else if (f && fieldInput(f.replace(/^base\./, ''))) {
        setError(f.replace(/^base\./, ''), d.error || `the server answered ${res.status}`);
        goTo(f.replace(/^base\./, ''));
        sweepErr('sweep', `the server refused the sweep: ${f}: ${d.error || res.status}`);
      } else sweepErr('sweep', `the server refused the sweep: ${f ? f + ': ' : ''}${d.error || `status ${res.status}`}`);
    } catch (e) {
      sweepErr('sweep', `could not reach the server: ${e.message}`);
    } finally {
      btn.disabled = false;
    }
  });

  // A ?spec= in the URL (from a run page's "edit and rerun") fills the form.
  const given = new URLSearchParams(location.search).get('spec');
  let filled = false;
  if (given) {
    try {
      filled = fill(JSON.parse(given));
    } catch (e) {
      $('#form-error').textContent = `the spec in the URL is not valid JSON: ${e.message}`;
    }
  }
  if (!filled && sel.value) showProblem(sel.value, true);
  fillSweepParams();
  recentRuns();
  document.body.dataset.ready = '1';
}

// recentRuns lists the server's runs (GET /api/runs), newest first.
async function recentRuns() {
  let res;
  try {
    res = await api('GET', '/api/runs');
  } catch (e) {
    return;
  }
  // The store's listing is {runs, total, …}; a server without a store
  // answers with the array of its live runs.
  const list = res.ok && res.data ? (Array.isArray(res.data) ? res.data : res.data.runs) : null;
  if (!Array.isArray(list) || !list.length) return;
  const runs = list.slice().sort((a, b) => String(b.created).localeCompare(String(a.created)));
  const rows = runs.slice(0, 20).map((r) =>
    el(
      'tr',
      { 'data-run': r.id },
      el('td', {}, el('a', { href: '/runs/' + encodeURIComponent(r.id), text: r.id })),
      el('td', { text: r.problem || '' }),
      el('td', {}, el('span', { class: 'status st-' + r.status, text: r.status })),
      el('td', { text: r.created ? new Date(r.created).toLocaleString() : '' })
    )
  );
  $('#recent-runs tbody').replaceChildren(...rows);
  $('#recent-runs').hidden = false;
}
