// fwlab dashboard script: the start page's form (catalogue, rules, schedule
// preview, presets, submission) and the live run page (websocket stream,
// decimated uPlot charts, replication bands, events, controls, exports,
// teaching view and problem panels). No build step, no dependencies beyond
// the vendored uPlot.
(function () {
  'use strict';

  // State the browser tests read (chart point counts, markers, bands).
  const fwlab = (window.fwlab = { charts: {}, traces: [], status: null, exports: [] });

  // ---------------------------------------------------------------- shared

  const $ = (sel, root) => (root || document).querySelector(sel);
  const $$ = (sel, root) => Array.from((root || document).querySelectorAll(sel));
  const el = (tag, attrs, ...kids) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = v;
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v);
    }
    for (const c of kids) if (c != null) e.append(c);
    return e;
  };

  // The batch schedule m_k, the same formula as internal/solver/schedule.go.
  function scheduleSize(s, k, n) {
    if (n <= 1) return n;
    let m;
    switch (s.kind) {
      case 'paper': {
        const q = Math.exp(2 * s.alpha * k * Math.log1p(-s.rho));
        m = Math.ceil(n / (1 + n * q));
        break;
      }
      case 'constant':
        m = s.m0;
        break;
      case 'geometric':
        m = Math.ceil(s.m0 * Math.pow(s.growth, k - 1));
        break;
      default:
        m = n;
    }
    if (!(m >= 1)) m = 1;
    if (m > n) m = n;
    return m;
  }
  fwlab.scheduleSize = scheduleSize;

  // Tick labels that stay readable on log axes (uPlot's default prints
  // values ≤ 1e-4 as "0").
  function fmtNum(v) {
    if (v == null || !isFinite(v)) return '';
    if (v === 0) return '0';
    const a = Math.abs(v);
    if (a >= 1e5 || a < 1e-3) return v.toExponential(a === Math.pow(10, Math.round(Math.log10(a))) ? 0 : 1).replace('e+', 'e');
    return String(+v.toPrecision(4));
  }
  fwlab.fmtNum = fmtNum;

  function fmtCell(v, digits) {
    if (v == null || (typeof v === 'number' && !isFinite(v))) return '–';
    if (typeof v !== 'number') return String(v);
    const a = Math.abs(v);
    if (a !== 0 && (a >= 1e6 || a < 1e-3)) return v.toExponential(digits || 4);
    return String(+v.toPrecision(digits || 6));
  }

  const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#17becf', '#8c564b', '#e377c2'];
  function alpha(hex, a) {
    const n = parseInt(hex.slice(1), 16);
    return `rgba(${(n >> 16) & 255},${(n >> 8) & 255},${n & 255},${a})`;
  }

  async function api(method, url, body) {
    const opt = { method, headers: {} };
    if (body !== undefined) {
      opt.headers['Content-Type'] = 'application/json';
      opt.body = JSON.stringify(body);
    }
    const res = await fetch(url, opt);
    const text = await res.text();
    let data = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch (e) {
      data = { error: text.trim() };
    }
    return { ok: res.ok, status: res.status, data };
  }

  function download(name, blob) {
    const a = el('a', { href: URL.createObjectURL(blob), download: name });
    document.body.append(a);
    a.click();
    setTimeout(() => {
      URL.revokeObjectURL(a.href);
      a.remove();
    }, 1000);
  }

  // ------------------------------------------------------------ start page

  // Rules mirrored from internal/spec so that a mistake shows before the
  // round trip; the server's answer uses the same words and is shown the
  // same way.
  function isInt(s) {
    return /^[+-]?\d+$/.test(String(s).trim());
  }
  function num(s) {
    const t = String(s).trim();
    if (t === '') return NaN;
    const v = Number(t);
    return isFinite(v) ? v : NaN;
  }
  const q = (s) => JSON.stringify(String(s));

  function checkParam(p, raw) {
    const v = String(raw).trim();
    const fail = () => `${p.rule}, got ${q(v)}`;
    switch (p.kind) {
      case 'int':
      case 'float': {
        if (p.kind === 'int' && !isInt(v)) return fail();
        const x = num(v);
        if (isNaN(x)) return fail();
        if (p.min != null && (x < p.min || (p.min_exclusive && x === p.min))) return fail();
        if (p.max != null && (x > p.max || (p.max_exclusive && x === p.max))) return fail();
        return '';
      }
      case 'choice':
        return (p.choices || []).includes(v) ? '' : fail();
      case 'bool':
        return v === 'true' || v === 'false' ? '' : fail();
    }
    return '';
  }
  fwlab.checkParam = checkParam;

  // checkAlgo checks an algorithm row; blocks (the instance's q from its
  // preview), when known, bounds r as the server does.
  function checkAlgo(a, stochastic, blocks) {
    const errs = {};
    if (['open-loop', 'short'].includes(a.stepsize) && a.algo !== 'fw')
      errs.stepsize = `${q(a.stepsize)} is a rule of fw only (use paper, curvature or backtrack)`;
    if (a.L !== 'auto') {
      const l = num(a.L);
      if (!(l > 0)) errs.L = `must be a positive number or "auto", got ${q(a.L)}`;
    }
    if (stochastic) {
      if (a.schedule === 'paper') {
        if (!(a.rho > 0 && a.rho < 1)) errs.rho = `must lie strictly between 0 and 1, got ${a.rawRho}`;
        if (!(a.alpha > 0 && a.alpha < 1)) errs.alpha = `must lie strictly between 0 and 1, got ${a.rawAlpha}`;
      }
      if (a.schedule === 'constant' || a.schedule === 'geometric') {
        if (!isInt(a.rawM0) || a.m0 < 1) errs.m0 = `must be at least 1, got ${a.rawM0}`;
      }
      if (a.schedule === 'geometric' && !(a.growth > 1)) errs.growth = `must be a number greater than 1, got ${a.rawGrowth}`;
    }
    if (a.rawR !== undefined && (!isInt(a.rawR) || a.r < 0)) errs.r = `must be at least 1 (or 0 for all blocks), got ${a.rawR}`;
    else if (a.rawR !== undefined && blocks > 0 && a.r > blocks) errs.r = `must be at most the number of blocks q = ${blocks}, got ${a.r}`;
    return errs;
  }
  fwlab.checkAlgo = checkAlgo;

  function initStart() {
    const cat = JSON.parse($('#catalogue').textContent);
    const problems = {};
    for (const g of cat.groups || []) for (const p of g.problems) problems[p.name] = p;
    const stoch = new Set(cat.stochastic || []);
    const D = cat.defaults;
    const form = $('#start-form');
    const sel = $('#problem');
    const rows = $('#algo-rows');
    const tmpl = $('#algo-row-template');
    fwlab.catalogue = cat;

    const isBlock = (algo) => algo.startsWith('bc');

    function fieldset(name) {
      return $(`fieldset[data-problem="${CSS.escape(name)}"]`);
    }

    function showProblem(name, withDefaults) {
      for (const fs of $$('fieldset[data-problem]')) fs.hidden = fs.dataset.problem !== name;
      if (withDefaults) {
        rows.innerHTML = '';
        const p = problems[name];
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

    function schedulePreview() {
      clearTimeout(pv.timer);
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
          `q = ${plural(d.blocks, 'block', 'blocks')} · F* ${d.fstar != null ? 'known' : 'unknown'}`
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
      for (const k of ['workers', 'caratheodory', 'mu', 'eps', 'no_average']) if (a && a[k]) keep[k] = a[k];
      row.dataset.keep = JSON.stringify(keep);
      const algoSel = $('[data-key=algo]', row);
      for (const name of p.algorithms) algoSel.append(el('option', { value: name, text: name }));
      a = a || {};
      algoSel.value = a.algo && p.algorithms.includes(a.algo) ? a.algo : p.algorithms[0];
      const set = (k, v) => {
        const c = $(`[data-key=${k}]`, row);
        if (c && v != null && v !== '') c.value = v;
      };
      set('stepsize', a.stepsize || (algoSel.value === 'fw' ? 'open-loop' : D.stepsize));
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
      const o = Object.assign({ algo: a.algo, stepsize: a.stepsize, L: a.L, schedule: a.schedule }, a.keep || {});
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
      for (const e of $$('[data-stochastic]', row)) e.hidden = !s;
      for (const e of $$('[data-sched]', row)) e.hidden = !s || !e.dataset.sched.split(' ').includes(a.schedule);
      for (const e of $$('[data-blocks]', row)) e.hidden = !isBlock(a.algo);
      const errs = checkAlgo(a, s, knownQ());
      for (const e of $$('[data-error-key]', row)) e.textContent = errs[e.dataset.errorKey] || '';
      const rIn = $('[data-key=r]', row);
      if (rIn) rIn.classList.toggle('invalid', !!errs.r);
      const qOf = $('[data-q-of]', row);
      if (qOf) qOf.textContent = knownQ() > 0 ? `of q = ${knownQ()} ${knownQ() === 1 ? 'block' : 'blocks'}` : '';
      if (s) drawPreview(row, a, errs);
    }

    function drawPreview(row, a, errs) {
      const cv = $('.sched-preview', row);
      const cap = $('.preview-caption', row);
      const ctx = cv.getContext('2d');
      ctx.clearRect(0, 0, cv.width, cv.height);
      const n = num($('[data-key=preview_n]', row).value);
      if (Object.keys(errs).length || !(n >= 1)) {
        cap.textContent = 'fix the schedule parameters to see m_k';
        return;
      }
      // k from 1 until m_k reaches n (at most 400 iterations shown).
      a = { kind: a.schedule, rho: a.rho, alpha: a.alpha, m0: a.m0, growth: a.growth };
      let K = 10;
      while (K < 400 && scheduleSize(a, K, n) < n) K += 10;
      const pad = 4, W = cv.width - 2 * pad, H = cv.height - 2 * pad;
      ctx.strokeStyle = '#ccc';
      ctx.strokeRect(pad, pad, W, H);
      ctx.strokeStyle = '#1f77b4';
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      for (let k = 1; k <= K; k++) {
        const m = scheduleSize(a, k, n);
        const x = pad + ((k - 1) / Math.max(1, K - 1)) * W;
        const y = pad + H - (m / n) * H;
        k === 1 ? ctx.moveTo(x, y) : ctx.lineTo(x, y);
      }
      ctx.stroke();
      cap.textContent = `m_k for k = 1…${K} (n = ${n}): m_1 = ${scheduleSize(a, 1, n)}, m_${K} = ${scheduleSize(a, K, n)}`;
      row.dataset.previewK = K;
    }

    function clearErrors() {
      for (const e of $$('.err')) e.textContent = '';
      for (const e of $$('.invalid')) e.classList.remove('invalid');
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
        const ae = checkAlgo(a, stoch.has(a.algo), knownQ());
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
      return true;
    }
    fwlab.fillSpec = fill;

    // File pickers of path parameters: the chosen file is uploaded
    // (POST /api/uploads), checked by the server, and its stored path fills
    // the text field; a rejected file shows the server's error under it.
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
      let res;
      try {
        const r = await fetch('/api/uploads', { method: 'POST', body: fd });
        const body = await r.text();
        let data;
        try {
          data = JSON.parse(body);
        } catch (e) {
          data = { error: body.trim() || `the server answered ${r.status}` };
        }
        res = { status: r.status, data };
      } catch (e) {
        res = { status: 0, data: { error: `could not reach the server: ${e.message}` } };
      }
      input.value = '';
      const d = res.data || {};
      if (res.status === 201 && d.path) {
        text.value = d.path;
        text.dispatchEvent(new Event('input', { bubbles: true }));
        if (status) status.textContent = `uploaded ${d.name}: ${d.rows} × ${d.cols} (${d.bytes} bytes)`;
        input.dataset.state = 'done';
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
      } catch (e) {
        setError('', `could not reach the server: ${e.message}`);
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
    if (!res.ok || !Array.isArray(res.data) || !res.data.length) return;
    const runs = res.data.slice().sort((a, b) => String(b.created).localeCompare(String(a.created)));
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

  // -------------------------------------------------------- run page: data

  const BASE = ['k', 'passes', 'time_s', 'gamma', 'batch', 'active', 'objective', 'gap', 'grad_err'];
  // Extra keys that belong to the teaching view, not to charts.
  const TEACH = /^(x0|x1|fw_x0|fw_x1|away_x0|away_x1|w:.*)$/;

  // Trace holds every record of one (algorithm, replication) in columns.
  class Trace {
    constructor(meta, keepExtra) {
      this.meta = meta;
      this.n = 0;
      this.cap = 1024;
      this.cols = {};
      for (const c of BASE) this.cols[c] = new Float64Array(this.cap);
      this.step = [];
      this.drops = []; // record indices of drop events
      this.aways = []; // record indices of away steps
      this.counts = {};
      this.keepExtra = keepExtra;
      this.extras = keepExtra ? [] : null;
      this.hasXY = false; // the records carry the 2-D iterate (teaching view)
      this.wkeys = new Set(); // the vertices that ever held weight
      this.last = {};
    }
    col(name) {
      let c = this.cols[name];
      if (!c) {
        c = this.cols[name] = new Float64Array(this.cap).fill(NaN);
      }
      return c;
    }
    grow() {
      this.cap *= 2;
      for (const [k, c] of Object.entries(this.cols)) {
        const d = new Float64Array(this.cap).fill(NaN);
        d.set(c.subarray(0, this.n));
        this.cols[k] = d;
      }
    }
    push(r) {
      if (this.n === this.cap) this.grow();
      const i = this.n;
      for (const c of BASE) {
        const v = r[c];
        const x = v == null ? NaN : +v;
        this.cols[c][i] = x;
        if (x === x) this.counts[c] = (this.counts[c] || 0) + 1;
      }
      this.step.push(r.step);
      if (r.step === 'drop' || r.drops > 0) this.drops.push(i);
      if (r.step === 'away' || r.away_steps > 0) this.aways.push(i);
      if (r.extra) {
        for (const [k, v] of Object.entries(r.extra)) {
          if (TEACH.test(k)) continue;
          this.col(k)[i] = v == null ? NaN : +v;
          this.counts['extra:' + k] = (this.counts['extra:' + k] || 0) + 1;
        }
      }
      if (this.extras) {
        this.extras.push(r.extra || null);
        if (r.extra) {
          if (r.extra.x0 != null) this.hasXY = true;
          for (const k in r.extra) if (k.charCodeAt(0) === 119 && k.startsWith('w:')) this.wkeys.add(k);
        }
      }
      if (r.objective != null) this.last.objective = r.objective;
      if (r.gap != null) this.last.gap = r.gap;
      this.last.rec = r;
      this.n++;
    }
  }

  // Group is one algorithm row: its replications as a median with a min–max
  // envelope (a single replication reads its trace directly).
  class Group {
    constructor(key, label, color) {
      this.key = key;
      this.label = label;
      this.color = color;
      this.traces = [];
      this.n = 0;
      this.med = {};
      this.lo = {};
      this.hi = {};
      this.cap = 0;
    }
    get band() {
      return this.traces.length > 1;
    }
    columns() {
      const s = new Set();
      for (const t of this.traces) for (const k of Object.keys(t.cols)) s.add(k);
      return [...s];
    }
    // update computes the rows every replication has reached (or all rows
    // once the replications are finished).
    update(finished) {
      if (!this.band) {
        this.n = this.traces[0].n;
        return;
      }
      let limit = Infinity, maxN = 0;
      for (const t of this.traces) {
        maxN = Math.max(maxN, t.n);
        if (!finished(t)) limit = Math.min(limit, t.n);
      }
      limit = Math.min(limit, maxN);
      if (limit <= this.n) return;
      const cols = this.columns();
      if (limit > this.cap) {
        let cap = Math.max(1024, this.cap);
        while (cap < limit) cap *= 2;
        for (const c of cols) for (const m of [this.med, this.lo, this.hi]) {
          const d = new Float64Array(cap).fill(NaN);
          if (m[c]) d.set(m[c].subarray(0, this.n));
          m[c] = d;
        }
        this.cap = cap;
      }
      for (const c of cols) for (const m of [this.med, this.lo, this.hi]) if (!m[c]) m[c] = new Float64Array(this.cap).fill(NaN);
      const buf = [];
      for (let i = this.n; i < limit; i++) {
        for (const c of cols) {
          buf.length = 0;
          for (const t of this.traces) {
            if (i < t.n && t.cols[c]) {
              const v = t.cols[c][i];
              if (v === v) buf.push(v);
            }
          }
          if (!buf.length) continue;
          buf.sort((a, b) => a - b);
          const h = buf.length >> 1;
          this.med[c][i] = buf.length & 1 ? buf[h] : 0.5 * (buf[h - 1] + buf[h]);
          this.lo[c][i] = buf[0];
          this.hi[c][i] = buf[buf.length - 1];
        }
      }
      this.n = limit;
    }
    val(c, i) {
      if (!this.band) {
        const col = this.traces[0].cols[c];
        return col ? col[i] : NaN;
      }
      return this.med[c] ? this.med[c][i] : NaN;
    }
    low(c, i) {
      return this.band ? (this.lo[c] ? this.lo[c][i] : NaN) : this.val(c, i);
    }
    high(c, i) {
      return this.band ? (this.hi[c] ? this.hi[c][i] : NaN) : this.val(c, i);
    }
  }

  // Decimator keeps, per bucket of consecutive records, the minimum and the
  // maximum (so spikes stay visible), with buckets that start small (every
  // one of the first records is kept, which log-x needs) and double in size
  // whenever there are more than `target` of them. Feeding is incremental.
  class Decimator {
    constructor(target) {
      this.target = target || 1000;
      this.reset(1);
    }
    reset(s) {
      this.s = s;
      this.n = 0;
      this.b = [];
      this.open = null;
    }
    cap(start) {
      return Math.min(this.s, Math.max(1, start >> 4));
    }
    // feed takes records [n, upto) of a source {v, lo, hi, sub, log}: the
    // value, lower and upper columns (Float64Array, NaN = missing; lo and
    // hi may be v itself), an offset subtracted from each (F*), and whether
    // non-positive values are dropped (log axes).
    feed(src, upto) {
      const { v, lo, hi, sub, log } = src;
      for (let i = this.n; i < upto; i++) {
        let o = this.open;
        if (!o) o = this.open = { start: i, count: 0, iMin: -1, vMin: Infinity, iMax: -1, vMax: -Infinity, lo: Infinity, hi: -Infinity };
        const x = v ? v[i] - sub : NaN;
        if (x === x && (!log || x > 0)) {
          if (x < o.vMin) (o.vMin = x), (o.iMin = i);
          if (x > o.vMax) (o.vMax = x), (o.iMax = i);
          let l = lo[i] - sub, h = hi[i] - sub;
          if (!(l === l) || (log && !(l > 0))) l = x;
          if (!(h === h)) h = x;
          if (l < o.lo) o.lo = l;
          if (h > o.hi) o.hi = h;
        }
        if (++o.count >= this.cap(o.start)) {
          if (o.iMin >= 0) this.b.push(o);
          this.open = null;
        }
      }
      this.n = Math.max(this.n, upto);
      if (this.b.length > this.target) {
        this.reset(this.s * 2);
        this.feed(src, upto);
      }
    }
    // points calls fn(i, y, lo, hi) in index order.
    points(fn) {
      const emit = (o) => {
        if (o.iMin < 0) return;
        if (o.iMin === o.iMax) fn(o.iMin, o.vMin, o.lo, o.hi);
        else if (o.iMin < o.iMax) fn(o.iMin, o.vMin, o.lo, o.hi), fn(o.iMax, o.vMax, o.lo, o.hi);
        else fn(o.iMax, o.vMax, o.lo, o.hi), fn(o.iMin, o.vMin, o.lo, o.hi);
      };
      for (const o of this.b) emit(o);
      if (this.open) emit(this.open);
    }
  }
  fwlab.Decimator = Decimator;

  // merge aligns several sorted (x, values…) series on one x array, as uPlot
  // wants: a row per distinct x (a repeated x in one series starts a new row).
  function merge(series, width) {
    const heads = series.map(() => 0);
    const xs = [];
    const cols = [];
    for (let j = 0; j < width; j++) cols.push([]);
    for (;;) {
      let best = Infinity;
      for (let s = 0; s < series.length; s++) if (heads[s] < series[s].x.length && series[s].x[heads[s]] < best) best = series[s].x[heads[s]];
      if (best === Infinity) break;
      xs.push(best);
      for (const c of cols) c.push(null);
      const row = xs.length - 1;
      for (let s = 0; s < series.length; s++) {
        const S = series[s];
        if (heads[s] < S.x.length && S.x[heads[s]] === best) {
          for (let j = 0; j < S.cols.length; j++) cols[S.at + j][row] = S.cols[j][heads[s]];
          heads[s]++;
        }
      }
    }
    return [xs, ...cols];
  }
  fwlab.merge = merge;

  // ---------------------------------------------------------- run page: UI

  const CHARTS = [
    { id: 'objective', col: 'objective', title: 'Objective F(x)', log: true },
    { id: 'gap', col: 'gap', title: 'Duality gap', log: true },
    { id: 'active', col: 'active', title: 'Active-set size |U|', log: false },
    { id: 'batch', col: 'batch', title: 'Batch size m_k', log: true },
    { id: 'gamma', col: 'gamma', title: 'Step size γ', log: true },
    { id: 'grad_err', col: 'grad_err', title: 'Sampled-gradient error ‖g − ∇F(x)‖', log: true },
  ];
  const XLABEL = { k: 'iteration k', passes: 'effective passes', time_s: 'seconds' };

  function initRun() {
    const page = $('#run-page');
    let runId = page.dataset.runId;
    const params = new URLSearchParams(location.search);
    let specText = params.get('spec');
    const S = {
      traces: [],
      groups: [],
      byKey: {},
      status: null,
      info: null,
      charts: [],
      extraCharts: {},
      xaxis: 'k',
      logx: false,
      fstar: null,
      done: false,
      ws: null,
      catchingUp: false,
    };
    fwlab.runState = S;
    // Where the page's time goes (for the browser tests and the curious):
    // JSON parsing, appending records, drawing; and the longest stall of a
    // 100 ms timer, which says whether the page stays responsive.
    const perf = (fwlab.perf = { parseMs: 0, pushMs: 0, drawMs: 0, maxDrawMs: 0, draws: 0, bytes: 0, maxStallMs: 0 });
    let tick = performance.now();
    setInterval(() => {
      const now = performance.now();
      perf.maxStallMs = Math.max(perf.maxStallMs, now - tick - 100);
      tick = now;
    }, 100);

    const showError = (msg) => {
      const p = $('#run-error');
      p.textContent = msg;
      p.hidden = !msg;
    };

    function finished(t) {
      const st = S.status && S.status.traces && S.status.traces[t.meta.trace];
      return !!st && st.status !== 'running';
    }

    // Algorithms whose step is not chosen by a step-size rule: spg (1/L of
    // the smoothed problem) and the structural SVM solvers (exact line
    // search, or 1/k for ssg).
    function ownStep(a) {
      const problem = S.status && S.status.spec && S.status.spec.problem;
      return a.algo === 'spg' || a.algo === 'ssg' || a.algo === 'bcfw-as' ||
        (typeof problem === 'string' && problem.startsWith('ssvm'));
    }

    function describe(a) {
      if (!a) return '';
      const bits = [];
      if (a.stepsize && !ownStep(a)) bits.push(a.stepsize);
      if (a.L && a.L !== 'auto' && !ownStep(a)) bits.push('L=' + a.L);
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
    // trace). Traces of one algorithm row share a group: the n-th trace of
    // algorithm A with replication j belongs to the n-th row of algorithm A.
    function setupTraces(run) {
      const algos = (run.spec && run.spec.algorithms) || [];
      const seen = {};
      for (const tm of run.traces || []) {
        if (S.traces[tm.trace]) continue;
        const tk = tm.algo + '/' + tm.replication;
        const ord = (seen[tk] = (seen[tk] || 0) + 1) - 1;
        const key = tm.algo + '#' + ord;
        let g = S.byKey[key];
        if (!g) {
          const rowsOf = algos.filter((a) => a.algo === tm.algo);
          const a = rowsOf[ord];
          const same = Object.keys(S.byKey).filter((k) => k.startsWith(tm.algo + '#')).length;
          const label = tm.algo + (same || rowsOf.length > 1 ? ` #${ord + 1}` : '') + (a && describe(a) ? ` (${describe(a)})` : '');
          g = S.byKey[key] = new Group(key, label, COLORS[S.groups.length % COLORS.length]);
          S.groups.push(g);
        }
        const t = new Trace(tm, !!(S.info && S.info.panels && S.info.panels.geometry));
        t.group = g;
        g.traces.push(t);
        S.traces[tm.trace] = t;
      }
      fwlab.traces = S.traces.map((t) => ({
        trace: t.meta.trace,
        algo: t.meta.algo,
        replication: t.meta.replication,
        get n() {
          return t.n;
        },
        get status() {
          const st = S.status && S.status.traces && S.status.traces[t.meta.trace];
          return st ? st.status : '';
        },
        get drops() {
          return t.drops.length;
        },
      }));
    }

    function onStatus(run, hello) {
      if (!run) return;
      const first = !S.status;
      S.status = run;
      fwlab.status = run.status;
      if (run.info) S.info = run.info;
      if (first || hello) {
        S.fstar = S.info && S.info.fstar != null ? S.info.fstar : null;
        setupTraces(run);
        if (!S.charts.length) buildCharts();
        if (S.info && S.info.panels) {
          if (S.info.panels.geometry) Teach.init(S, S.info.panels.geometry);
          Panels.render(S.info.panels);
        }
        const sp = run.spec ? JSON.stringify(run.spec) : specText;
        if (sp) $('#edit-spec').href = '/?spec=' + encodeURIComponent(sp);
        const info = S.info || {};
        const bits = [];
        if (run.spec) bits.push(run.spec.problem);
        if (info.dim) bits.push(`p = ${info.dim}`);
        if (info.samples) bits.push(`n = ${info.samples}`);
        if (info.blocks) bits.push(`q = ${info.blocks} block${info.blocks > 1 ? 's' : ''}`);
        if (S.fstar != null) bits.push(`F* = ${fmtCell(S.fstar, 10)}`);
        $('#run-info').textContent = bits.join(' · ');
      }
      setupTraces(run);
      resultPanels(run);
      const failed = (run.traces || []).filter((t) => t.status === 'failed');
      if (failed.length)
        showError(failed.map((t) => `trace ${t.trace} (${t.algo}, replication ${t.replication}) failed: ${(t.summary && t.summary.message) || 'no message'}`).join('; '));
      $('#run-status').textContent = run.status;
      $('#run-status').className = 'status st-' + run.status;
      page.dataset.status = run.status;
      const paused = run.status === 'paused', active = run.status === 'running' || paused;
      $('#btn-pause').disabled = !active || paused;
      $('#btn-resume').disabled = !paused;
      $('#btn-step').disabled = !paused;
      $('#btn-stop').disabled = !active;
      scheduleDraw();
    }

    // resultPanels hands the panels of each algorithm row's final estimate
    // (its first replication that has them) to the panels card, when a
    // trace that has them has finished since the last call.
    // The stream's status leaves the panels out (has_panels marks the
    // traces that have them): they are fetched with GET /api/runs/{id}.
    let resultSig = '', fetchingPanels = false;
    async function fetchPanels() {
      if (fetchingPanels) return;
      fetchingPanels = true;
      try {
        const res = await api('GET', `/api/runs/${encodeURIComponent(runId)}`);
        if (res.ok && res.data) resultPanels(res.data);
      } catch (e) {
        showError(`fetching the estimates' panels failed: ${e.message}`);
      } finally {
        fetchingPanels = false;
      }
      // Traces that finished meanwhile.
      if (S.status) resultPanels(S.status);
    }
    function resultPanels(run) {
      const have = (run.traces || []).filter((t) => t.has_panels || (t.panels && typeof t.panels === 'object'));
      const sig = have.map((t) => t.trace).join(',');
      if (sig === resultSig) return;
      if (have.some((t) => !t.panels)) {
        fetchPanels();
        return;
      }
      resultSig = sig;
      const out = [];
      for (const g of S.groups) {
        const ts = g.traces.map((t) => run.traces[t.meta.trace]).filter((t) => t && t.panels).sort((a, b) => a.replication - b.replication);
        if (ts.length) out.push({ label: g.label, color: g.color, trace: ts[0].trace, replication: ts[0].replication, panels: ts[0].panels });
      }
      Panels.setResults(out);
    }

    function onRecords(batches) {
      for (const b of batches || []) {
        const t = S.traces[b.trace];
        if (!t) continue;
        if (b.from > t.n) {
          // A gap: records were missed; the complete trace fills it.
          catchUp();
          return;
        }
        const recs = b.records || [];
        for (let j = t.n - b.from; j < recs.length; j++) t.push(recs[j]);
      }
      scheduleDraw();
    }

    // catchUp fetches the complete trace (JSON Lines) and appends what is
    // missing, then follows the stream again.
    async function catchUp() {
      if (S.catchingUp) return;
      S.catchingUp = true;
      try {
        const res = await fetch(`/api/runs/${encodeURIComponent(runId)}/trace?format=jsonl`);
        if (!res.ok) throw new Error(`trace: ${res.status}`);
        const text = await res.text();
        const idx = {};
        for (const line of text.split('\n')) {
          if (!line.trim()) continue;
          const r = JSON.parse(line);
          const t = S.traces[r.trace];
          if (!t) continue;
          const i = (idx[r.trace] = (idx[r.trace] || 0) + 1) - 1;
          if (i >= t.n) t.push(r);
        }
        scheduleDraw();
      } catch (e) {
        showError(`fetching the complete trace failed: ${e.message}`);
      } finally {
        S.catchingUp = false;
      }
      if (!S.done) connect();
    }

    function connect() {
      if (S.ws && S.ws.readyState <= 1) return;
      const ws = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws/runs/${encodeURIComponent(runId)}`);
      S.ws = ws;
      fwlab.wsMessages = fwlab.wsMessages || 0;
      ws.onmessage = (ev) => {
        fwlab.wsMessages++;
        let m;
        const t0 = performance.now();
        try {
          m = JSON.parse(ev.data);
          perf.parseMs += performance.now() - t0;
          perf.bytes += ev.data.length;
        } catch (e) {
          showError('the server sent a malformed message');
          return;
        }
        if (m.type === 'hello') onStatus(m.run, true);
        else if (m.type === 'records') {
          const t1 = performance.now();
          onRecords(m.batches);
          perf.pushMs += performance.now() - t1;
        }
        else if (m.type === 'status') onStatus(m.run);
        else if (m.type === 'done') {
          S.done = true;
          onStatus(m.run);
          onDone();
        }
      };
      ws.onclose = (ev) => {
        if (S.ws !== ws) return;
        S.ws = null;
        if (S.done) return;
        if (ev.code === 1013) catchUp();
        else setTimeout(connect, 1000);
      };
    }

    async function onDone() {
      // Every record the status counts must be here; otherwise fetch them.
      const missing = (S.status.traces || []).some((st) => S.traces[st.trace] && S.traces[st.trace].n < st.records);
      if (missing) await catchUp();
      try {
        const res = await api('GET', `/api/runs/${encodeURIComponent(runId)}/panels`);
        if (res.ok && res.data) {
          S.info = S.info || {};
          S.info.panels = res.data;
          Panels.render(res.data);
        }
      } catch (e) {
        /* the panels sent with hello stay */
      }
      fwlab.done = true;
      scheduleDraw();
    }

    // -------------------------------------------------------- the charts

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

    function makeChart(def, container) {
      const card = el('div', { class: 'chart card', 'data-chart': def.id });
      const head = el('div', { class: 'chart-head' });
      const title = el('h4', { text: def.title });
      const logBox = el('input', { type: 'checkbox' });
      logBox.checked = def.log;
      const png = el('button', { type: 'button', class: 'small', text: 'PNG', 'data-png': def.id });
      head.append(title, el('label', { class: 'small' }, logBox, ' log y'), png);
      const body = el('div', { class: 'plot' });
      card.append(head, body);
      container.append(card);
      const C = { def, card, body, title, logY: def.log, userLog: false, u: null, decs: new Map(), layout: '', zoomed: false };
      fwlab.charts[def.id] = { points: 0, drawn: 0, drops: 0, aways: 0, band: false, bandRows: 0, logY: def.log };
      logBox.addEventListener('change', () => {
        C.logY = logBox.checked;
        C.userLog = true;
        C.decs.clear();
        C.layout = '';
        drawChart(C);
      });
      C.logBox = logBox;
      png.addEventListener('click', () => exportPNG(C));
      return C;
    }

    function buildCharts() {
      const box = $('#charts');
      for (const d of CHARTS) {
        const def = Object.assign({}, d);
        if (def.id === 'objective' && S.fstar != null) def.title = 'Suboptimality F(x) − F*';
        S.charts.push(makeChart(def, box));
      }
    }

    // value describes a chart's column of a group for the decimator.
    function value(C, g) {
      const c = C.def.col;
      const sub = C.def.id === 'objective' && S.fstar != null ? S.fstar : 0;
      const v = g.band ? g.med[c] : g.traces[0].cols[c];
      const lo = g.band ? g.lo[c] : v;
      const hi = g.band ? g.hi[c] : v;
      return { v, lo, hi, sub, log: C.logY };
    }

    function chartPoints(C) {
      let n = 0;
      const key = C.def.extra ? 'extra:' + C.def.col : C.def.col;
      for (const t of S.traces) if (t) n += t.counts[key] || 0;
      return n;
    }

    function drawAll() {
      const t0 = performance.now();
      drawAllNow();
      const dt = performance.now() - t0;
      perf.drawMs += dt;
      perf.draws++;
      perf.maxDrawMs = Math.max(perf.maxDrawMs, dt);
    }

    function drawAllNow() {
      for (const g of S.groups) g.update(finished);
      // Extra metrics (SSVM errors, dual, …) get charts of their own.
      const extraKeys = new Set();
      for (const t of S.traces) if (t) for (const k of Object.keys(t.counts)) if (k.startsWith('extra:')) extraKeys.add(k.slice(6));
      const order = ['test_err_avg', 'test_err', 'train_err_avg', 'train_err', 'rel_gap', 'dual'];
      for (const k of [...extraKeys].sort((a, b) => (order.indexOf(a) + 99) % 99 - (order.indexOf(b) + 99) % 99 || a.localeCompare(b))) {
        if (S.extraCharts[k]) continue;
        const log = /gap/.test(k);
        const C = makeChart({ id: 'extra-' + k, col: k, title: extraTitle(k), log, extra: true }, $('#extra-charts'));
        S.extraCharts[k] = C;
        S.charts.push(C);
      }
      const parts = perf.parts || (perf.parts = {});
      const timed = (name, fn) => {
        const t0 = performance.now();
        fn();
        parts[name] = (parts[name] || 0) + performance.now() - t0;
      };
      for (const C of S.charts) timed(C.def.id, () => drawChart(C));
      timed('legend', updateLegend);
      timed('teach', () => Teach.update());
    }

    function extraTitle(k) {
      const names = {
        test_err_avg: 'Test error (averaged iterate)',
        test_err: 'Test error',
        train_err_avg: 'Training error (averaged iterate)',
        train_err: 'Training error',
        rel_gap: 'Relative duality gap',
        dual: 'Dual objective',
      };
      return names[k] || k;
    }

    function drawChart(C) {
      const st = fwlab.charts[C.def.id];
      st.points = chartPoints(C);
      // A chart with nothing to show (the sampled-gradient error of a
      // deterministic method) stays hidden until it has points.
      const empty = st.points === 0;
      if (C.card.hidden !== empty) {
        C.card.hidden = empty;
        C.layout = '';
      }
      if (empty) return;
      // A log chart with no positive value at all falls back to linear
      // (unless the user chose), so that zeros still show.
      if (C.logY && !C.userLog && st.points > 0) {
        let pos = false;
        for (const g of S.groups) {
          const f = value(C, g);
          if (f.v) for (let i = 0; i < g.n && !pos; i++) if (f.v[i] - f.sub > 0) pos = true;
          if (pos) break;
        }
        if (!pos) {
          C.logY = false;
          C.logBox.checked = false;
          C.decs.clear();
          C.layout = '';
        }
      }
      st.logY = C.logY;
      const series = [];
      let width = 0;
      for (const g of S.groups) {
        let d = C.decs.get(g.key);
        if (!d) C.decs.set(g.key, (d = new Decimator(1000)));
        const src = value(C, g);
        d.feed(src, g.n);
        const xcol = g.band ? g.med[S.xaxis] : g.traces[0].cols[S.xaxis];
        const x = [], y = [], lo = [], hi = [];
        d.points((i, v, l, h) => {
          const xv = xcol ? xcol[i] : NaN;
          if (!(xv === xv) || (S.logx && !(xv > 0))) return;
          x.push(xv);
          y.push(v);
          lo.push(l);
          hi.push(h);
        });
        const cols = g.band ? [y, lo, hi] : [y];
        series.push({ x, cols, at: width, g });
        width += cols.length;
      }
      const data = merge(series, width);
      C.series = series;
      const layout = S.groups.map((g) => g.key + (g.band ? '+band' : '')).join(',') + `|${S.xaxis}|${S.logx}|${C.logY}`;
      if (!C.u || C.layout !== layout) {
        if (C.u) C.u.destroy();
        C.u = new uPlot(chartOpts(C, series), data, C.body);
        C.layout = layout;
        C.zoomed = false;
        C.u.over.addEventListener('dblclick', () => {
          C.zoomed = false;
        });
        // Band edges stay out of the legend; the median row carries the label.
        const rows = $$('.u-legend .u-series', C.u.root);
        let idx = 1;
        for (const s of series) {
          if (s.g.band) {
            if (rows[idx + 1]) rows[idx + 1].style.display = 'none';
            if (rows[idx + 2]) rows[idx + 2].style.display = 'none';
          }
          idx += s.cols.length;
        }
      } else {
        C.u.setData(data, !C.zoomed);
      }
      st.drawn = data[0].length;
      st.xkey = S.xaxis;
      st.logx = S.logx;
      st.xmax = data[0].length ? data[0][data[0].length - 1] : null;
      let bandRows = 0;
      for (const s of series) if (s.g.band) for (let j = 0; j < s.x.length; j++) if (s.cols[1][j] != null && s.cols[2][j] != null) bandRows++;
      st.bandRows = bandRows;
      st.band = bandRows > 0 && !!(C.u.bands && C.u.bands.length);
    }

    // bandProbe samples the chart's canvas between the min and max edges
    // of each band, away from the median line, and reports how many of the
    // samples carry the band's fill colour. With fwlab.probeDebug set to an
    // array, the samples without it are pushed there.
    fwlab.bandProbe = (id) => {
      const C = S.charts.find((c) => c.def.id === id);
      if (!C || !C.u || !C.series) return { samples: 0, filled: 0 };
      const u = C.u, ctx = u.ctx;
      let samples = 0, filled = 0;
      for (const s of C.series) {
        if (!s.g.band) continue;
        const base = 1 + s.at;
        const med = u.data[base], lo = u.data[base + 1], hi = u.data[base + 2];
        const want = parseInt(s.g.color.slice(1), 16);
        const rgb = [(want >> 16) & 255, (want >> 8) & 255, want & 255];
        for (let i = 0; i < u.data[0].length && samples < 200; i++) {
          if (lo[i] == null || hi[i] == null || med[i] == null) continue;
          const x = u.valToPos(u.data[0][i], 'x', true);
          const yl = u.valToPos(lo[i], 'y', true), yh = u.valToPos(hi[i], 'y', true), ym = u.valToPos(med[i], 'y', true);
          if (!(Math.abs(yl - yh) >= 10)) continue;
          const y = Math.abs(ym - yl) > Math.abs(ym - yh) ? (ym + yl) / 2 : (ym + yh) / 2;
          if (Math.abs(y - ym) < 4 || x < u.bbox.left + 2 || x > u.bbox.left + u.bbox.width - 2) continue;
          const px = ctx.getImageData(Math.round(x), Math.round(y), 1, 1).data;
          // The fill's colour, or the same hue darkened where a grid line
          // (translucent black) crosses the band.
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

    // chartScale reports a chart's x range and whether the user zoomed.
    fwlab.chartScale = (id) => {
      const C = S.charts.find((c) => c.def.id === id);
      if (!C || !C.u) return null;
      const xs = C.u.data[0];
      return { zoomed: C.zoomed, min: C.u.scales.x.min, max: C.u.scales.x.max, dataMax: xs.length ? xs[xs.length - 1] : null, draws: perf.draws };
    };

    function chartOpts(C, series) {
      const sers = [{ label: XLABEL[S.xaxis], value: (u, v) => fmtCell(v) }];
      const bands = [];
      for (const s of series) {
        const g = s.g;
        sers.push({ label: g.label + (g.band ? ` (median of ${g.traces.length})` : ''), stroke: g.color, width: 1.5, spanGaps: true, points: { show: false }, value: (u, v) => fmtCell(v) });
        if (g.band) {
          const lo = sers.length, hi = sers.length + 1;
          sers.push({ label: 'min', stroke: alpha(g.color, 0.35), width: 0.5, spanGaps: true, points: { show: false }, value: (u, v) => fmtCell(v) });
          sers.push({ label: 'max', stroke: alpha(g.color, 0.35), width: 0.5, spanGaps: true, points: { show: false }, value: (u, v) => fmtCell(v) });
          bands.push({ series: [hi, lo], fill: alpha(g.color, 0.18) });
        }
      }
      const width = Math.max(320, C.body.clientWidth || 480);
      return {
        width,
        height: 230,
        series: sers,
        bands,
        scales: {
          x: { time: false, distr: S.logx ? 3 : 1, log: 10 },
          y: { distr: C.logY ? 3 : 1, log: 10 },
        },
        axes: [
          { label: XLABEL[S.xaxis], values: (u, splits) => splits.map(fmtNum), size: 40 },
          { values: (u, splits) => splits.map(fmtNum), size: 60 },
        ],
        legend: { live: true },
        cursor: {
          sync: { key: 'fwlab-' + runId },
          dataIdx: (u, si, idx) => nearest(u.data[si], idx),
          drag: { x: true, y: true, uni: 20 },
        },
        hooks: {
          setSelect: [
            (u) => {
              if (u.select.width > 0 || u.select.height > 0) C.zoomed = true;
            },
          ],
          draw: [(u) => drawEvents(C, u)],
        },
      };
    }

    // nearest finds the closest non-null value to idx, so that hovering
    // reads every trace even where the merged x rows interleave.
    function nearest(arr, idx) {
      if (!arr || arr[idx] != null) return idx;
      for (let d = 1; d < 400; d++) {
        if (idx - d >= 0 && arr[idx - d] != null) return idx - d;
        if (idx + d < arr.length && arr[idx + d] != null) return idx + d;
      }
      return idx;
    }

    // drawEvents marks drop steps (triangles along the top) and away steps
    // (ticks along the bottom) of each algorithm's first replication; at
    // most one mark per pixel column.
    function drawEvents(C, u) {
      const st = fwlab.charts[C.def.id];
      const ctx = u.ctx;
      const { left, top, width, height } = u.bbox;
      const dpr = devicePixelRatio || 1;
      let drops = 0, aways = 0;
      ctx.save();
      ctx.beginPath();
      ctx.rect(left, top, width, height);
      ctx.clip();
      for (const g of S.groups) {
        const t = g.traces[0];
        const xcol = t.cols[S.xaxis];
        const mark = (list, fn) => {
          let last = -1e9, n = 0;
          for (const i of list) {
            const xv = xcol[i];
            if (!(xv === xv) || (S.logx && !(xv > 0))) continue;
            const px = u.valToPos(xv, 'x', true);
            if (px < left || px > left + width) continue;
            if (px - last < 1) continue;
            last = px;
            fn(px);
            n++;
          }
          return n;
        };
        ctx.fillStyle = g.color;
        ctx.strokeStyle = g.color;
        aways += mark(t.aways, (px) => {
          ctx.fillRect(px, top + height - 7 * dpr, Math.max(1, dpr), 7 * dpr);
        });
        ctx.fillStyle = '#c00';
        drops += mark(t.drops, (px) => {
          ctx.beginPath();
          ctx.moveTo(px - 4 * dpr, top + 1);
          ctx.lineTo(px + 4 * dpr, top + 1);
          ctx.lineTo(px, top + 8 * dpr);
          ctx.closePath();
          ctx.fill();
        });
      }
      ctx.restore();
      st.drops = drops;
      st.aways = aways;
    }

    function exportPNG(C) {
      if (!C.u) return;
      const src = C.u.ctx.canvas;
      const cv = document.createElement('canvas');
      cv.width = src.width;
      cv.height = src.height + 30;
      const ctx = cv.getContext('2d');
      ctx.fillStyle = '#fff';
      ctx.fillRect(0, 0, cv.width, cv.height);
      ctx.fillStyle = '#222';
      ctx.font = '16px sans-serif';
      ctx.fillText(`${C.def.title} — run ${runId}`, 8, 20);
      ctx.drawImage(src, 0, 30);
      const url = cv.toDataURL('image/png');
      fwlab.exports.push({ kind: 'png', chart: C.def.id, bytes: url.length });
      const a = el('a', { href: url, download: `fwlab-${runId}-${C.def.id}.png` });
      document.body.append(a);
      a.click();
      a.remove();
    }

    async function exportTrace(format) {
      const res = await fetch(`/api/runs/${encodeURIComponent(runId)}/trace?format=${format}`);
      if (!res.ok) {
        showError(`export failed: the server answered ${res.status}`);
        return;
      }
      const text = await res.text();
      fwlab.exports.push({ kind: format, bytes: text.length, lines: text.split('\n').filter((l) => l).length });
      fwlab.lastExport = text;
      const type = format === 'csv' ? 'text/csv' : 'application/x-ndjson';
      download(`fwlab-${runId}.${format === 'csv' ? 'csv' : 'jsonl'}`, new Blob([text], { type }));
    }

    function updateLegend() {
      const tb = $('#legend tbody');
      const st = (S.status && S.status.traces) || [];
      const rows = [];
      for (const t of S.traces) {
        if (!t) continue;
        const s = st[t.meta.trace] || {};
        const r = t.last.rec || {};
        const sum = s.summary || null;
        const g = t.group;
        const label = g.label + (g.traces.length > 1 ? ` · rep ${t.meta.replication} (seed ${t.meta.seed})` : '');
        rows.push(
          el(
            'tr',
            { 'data-trace': t.meta.trace, 'data-records': t.n },
            el('td', {}, el('span', { class: 'swatch', style: `background:${g.color}` })),
            el('td', { text: label }),
            el('td', { text: s.status || '' , title: sum && sum.message ? sum.message : '' }),
            el('td', { text: String(t.n) }),
            el('td', { text: fmtCell(r.k) }),
            el('td', { text: fmtCell(r.passes, 4) }),
            el('td', { text: fmtCell(r.time_s, 3) }),
            el('td', { text: fmtCell(sum ? sum.objective : t.last.objective, 10) }),
            el('td', { text: fmtCell(sum ? sum.gap : t.last.gap, 3) }),
            el('td', { text: fmtCell(r.active) }),
            el('td', { text: String(t.drops.length) }),
            el('td', { text: String(t.aways.length) })
          )
        );
      }
      tb.replaceChildren(...rows);
    }

    // ------------------------------------------------------ the controls

    const post = async (what) => {
      const res = await api('POST', `/api/runs/${encodeURIComponent(runId)}/${what}`);
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
      const res = await api('DELETE', `/api/runs/${encodeURIComponent(runId)}`);
      if (!res.ok) showError(`stop: ${(res.data && res.data.error) || res.status}`);
    });
    $('#xaxis').addEventListener('change', (ev) => {
      S.xaxis = ev.target.value;
      fwlab.xaxis = S.xaxis;
      for (const C of S.charts) C.layout = '';
      scheduleDraw();
    });
    $('#logx').addEventListener('change', (ev) => {
      S.logx = ev.target.checked;
      for (const C of S.charts) C.layout = '';
      scheduleDraw();
    });
    $('#export-csv').addEventListener('click', () => exportTrace('csv'));
    $('#export-json').addEventListener('click', () => exportTrace('jsonl'));
    window.addEventListener('resize', () => {
      for (const C of S.charts) if (C.u) C.u.setSize({ width: Math.max(320, C.body.clientWidth), height: 230 });
    });

    // ------------------------------------------------------------ start

    async function start() {
      let res = await api('GET', `/api/runs/${encodeURIComponent(runId)}`);
      if (res.status === 404 && specText) {
        // An unknown id with a spec in the URL: submit the spec again, so a
        // link reproduces the run.
        let spec;
        try {
          spec = JSON.parse(specText);
        } catch (e) {
          showError(`the spec in the URL is not valid JSON: ${e.message}`);
          return;
        }
        const post = await api('POST', '/api/runs', spec);
        if (post.status !== 201) {
          showError(`the spec in the URL was refused: ${post.data && post.data.field ? post.data.field + ': ' : ''}${(post.data && post.data.error) || post.status}`);
          return;
        }
        runId = post.data.id;
        page.dataset.runId = runId;
        $('#run-id').textContent = runId;
        history.replaceState(null, '', `/runs/${encodeURIComponent(runId)}?spec=${encodeURIComponent(specText)}`);
        fwlab.resubmitted = runId;
        res = await api('GET', `/api/runs/${encodeURIComponent(runId)}`);
      }
      if (!res.ok) {
        showError(`run ${runId}: ${(res.data && res.data.error) || 'not found'} (status ${res.status})`);
        page.dataset.status = 'missing';
        return;
      }
      fwlab.runId = runId;
      onStatus(res.data, true);
      connect();
    }
    start();
  }

  // -------------------------------------------------------- teaching view

  // Teach draws 2-D problems: polygon, level sets, iterate path, active
  // vertices by weight, FW and away vertices, drop steps, and the active-set
  // timeline, with step-by-step play. It reads panels.geometry:
  // {vertices: [[x,y]…] or [{key,x,y}…], keys?: [...], Q: [[a,b],[c,d]],
  // center (or c): [x,y], b?: [x,y]} with F(x) = ½(x−c)ᵀQ(x−c) + bᵀx.
  const Teach = (function () {
    let S = null, G = null, on = false, pos = 0, follow = true, timer = null, contours = null, view = null;
    const T = { init, update };
    fwlab.teach = { frames: 0, drawn: false };

    function parseGeometry(g) {
      const verts = [];
      const vs = g.vertices || [];
      vs.forEach((v, i) => {
        if (Array.isArray(v)) verts.push({ key: (g.keys && g.keys[i]) || String(i), x: +v[0], y: +v[1] });
        else if (v && typeof v === 'object') verts.push({ key: v.key != null ? String(v.key) : (g.keys && g.keys[i]) || String(i), x: +(v.x != null ? v.x : v[0]), y: +(v.y != null ? v.y : v[1]) });
      });
      const Q = g.Q || g.q || [[1, 0], [0, 1]];
      const c = g.center || g.c || [0, 0];
      const b = g.b || [0, 0];
      const xstar = Array.isArray(g.xstar) && g.xstar.length === 2 ? g.xstar : null;
      return { verts, Q, c, b, xstar };
    }

    function F(x, y) {
      const dx = x - G.c[0], dy = y - G.c[1];
      return 0.5 * (G.Q[0][0] * dx * dx + (G.Q[0][1] + G.Q[1][0]) * dx * dy + G.Q[1][1] * dy * dy) + G.b[0] * x + G.b[1] * y;
    }

    function init(state, geometry) {
      if (on) return; // once: the hello of every (re)connection repeats the panels
      S = state;
      G = parseGeometry(geometry);
      if (G.verts.length < 2) return;
      on = true;
      $('#teaching').hidden = false;
      const xs = G.verts.map((v) => v.x).concat([G.c[0]]);
      const ys = G.verts.map((v) => v.y).concat([G.c[1]]);
      let x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(...ys), y1 = Math.max(...ys);
      const span = Math.max(x1 - x0, y1 - y0) || 1;
      const cx = (x0 + x1) / 2, cy = (y0 + y1) / 2;
      view = { x0: cx - 0.6 * span, x1: cx + 0.6 * span, y0: cy - 0.6 * span, y1: cy + 0.6 * span };
      contours = levelSets();
      $('#teach-slider').addEventListener('input', (ev) => {
        pos = +ev.target.value;
        follow = false;
        draw();
      });
      $('#teach-back').addEventListener('click', () => {
        pos = Math.max(0, pos - 1);
        follow = false;
        draw();
      });
      $('#teach-fwd').addEventListener('click', () => {
        pos++;
        follow = false;
        draw();
      });
      $('#teach-play').addEventListener('click', () => (timer ? stop() : play()));
      $('#teach-speed').addEventListener('change', () => timer && (stop(), play()));
      $('#teach-trace').addEventListener('change', () => {
        pos = 0;
        draw();
      });
    }

    function play() {
      follow = false;
      const t = trace();
      if (t && pos >= t.n - 1) pos = 0;
      $('#teach-play').textContent = 'Pause';
      timer = setInterval(() => {
        const t = trace();
        if (!t || pos >= t.n - 1) return stop();
        pos++;
        draw();
      }, 1000 / +$('#teach-speed').value);
    }
    function stop() {
      clearInterval(timer);
      timer = null;
      $('#teach-play').textContent = 'Play';
    }

    function trace() {
      const v = $('#teach-trace').value;
      return v === '' ? null : S.traces[+v];
    }

    function update() {
      if (!on) return;
      const sel = $('#teach-trace');
      const have = new Set($$('option', sel).map((o) => o.value));
      for (const t of S.traces) {
        if (!t || have.has(String(t.meta.trace)) || !t.hasXY) continue;
        sel.append(el('option', { value: t.meta.trace, text: `${t.group.label} · rep ${t.meta.replication}` }));
        if (sel.options.length === 1) sel.value = String(t.meta.trace);
      }
      const t = trace();
      if (t) {
        $('#teach-slider').max = Math.max(0, t.n - 1);
        if (follow) pos = Math.max(0, t.n - 1);
      }
      draw();
    }

    // levelSets traces contour lines of F by marching squares on a grid.
    function levelSets() {
      const N = 90, vals = [];
      let lo = Infinity;
      for (let j = 0; j <= N; j++)
        for (let i = 0; i <= N; i++) {
          const x = view.x0 + ((view.x1 - view.x0) * i) / N, y = view.y0 + ((view.y1 - view.y0) * j) / N;
          const f = F(x, y);
          vals.push(f);
          lo = Math.min(lo, f);
        }
      let hi = -Infinity;
      for (const v of G.verts) hi = Math.max(hi, F(v.x, v.y));
      if (!(hi > lo)) hi = lo + 1;
      const levels = [];
      for (let l = 1; l <= 12; l++) levels.push(lo + (hi - lo) * Math.pow(l / 12, 2) * 1.2);
      const segs = [];
      const at = (i, j) => vals[j * (N + 1) + i];
      const P = (i, j) => [view.x0 + ((view.x1 - view.x0) * i) / N, view.y0 + ((view.y1 - view.y0) * j) / N];
      for (const L of levels) {
        const seg = [];
        for (let j = 0; j < N; j++)
          for (let i = 0; i < N; i++) {
            const c = [[i, j], [i + 1, j], [i + 1, j + 1], [i, j + 1]];
            const pts = [];
            for (let e = 0; e < 4; e++) {
              const a = c[e], b = c[(e + 1) % 4];
              const fa = at(a[0], a[1]) - L, fb = at(b[0], b[1]) - L;
              if ((fa < 0) !== (fb < 0)) {
                const s = fa / (fa - fb), pa = P(a[0], a[1]), pb = P(b[0], b[1]);
                pts.push([pa[0] + s * (pb[0] - pa[0]), pa[1] + s * (pb[1] - pa[1])]);
              }
            }
            if (pts.length >= 2) seg.push(pts[0], pts[1]);
            if (pts.length === 4) seg.push(pts[2], pts[3]);
          }
        segs.push(seg);
      }
      return segs;
    }

    function draw() {
      if (!on) return;
      const cv = $('#teach-canvas');
      const ctx = cv.getContext('2d');
      const W = cv.width, H = cv.height;
      const X = (x) => ((x - view.x0) / (view.x1 - view.x0)) * W;
      const Y = (y) => H - ((y - view.y0) / (view.y1 - view.y0)) * H;
      ctx.clearRect(0, 0, W, H);
      ctx.fillStyle = '#fff';
      ctx.fillRect(0, 0, W, H);
      // polygon (the vertices in the order given)
      ctx.beginPath();
      G.verts.forEach((v, i) => (i ? ctx.lineTo(X(v.x), Y(v.y)) : ctx.moveTo(X(v.x), Y(v.y))));
      ctx.closePath();
      ctx.fillStyle = '#eef3fa';
      ctx.fill();
      ctx.strokeStyle = '#345';
      ctx.lineWidth = 1.5;
      ctx.stroke();
      // level sets
      ctx.strokeStyle = 'rgba(120,120,120,0.45)';
      ctx.lineWidth = 1;
      for (const seg of contours) {
        ctx.beginPath();
        for (let i = 0; i + 1 < seg.length; i += 2) {
          ctx.moveTo(X(seg[i][0]), Y(seg[i][1]));
          ctx.lineTo(X(seg[i + 1][0]), Y(seg[i + 1][1]));
        }
        ctx.stroke();
      }
      ctx.fillStyle = '#888';
      ctx.fillText('centre', X(G.c[0]) + 4, Y(G.c[1]) - 4);
      ctx.fillRect(X(G.c[0]) - 2, Y(G.c[1]) - 2, 4, 4);
      if (G.xstar) {
        ctx.strokeStyle = '#000';
        ctx.lineWidth = 1;
        ctx.strokeRect(X(G.xstar[0]) - 4, Y(G.xstar[1]) - 4, 8, 8);
        ctx.fillStyle = '#000';
        ctx.fillText('x*', X(G.xstar[0]) + 6, Y(G.xstar[1]) + 12);
      }
      for (const v of G.verts) {
        ctx.fillStyle = '#345';
        ctx.beginPath();
        ctx.arc(X(v.x), Y(v.y), 2.5, 0, 2 * Math.PI);
        ctx.fill();
      }
      const t = trace();
      if (!t || !t.extras || !t.n) return;
      pos = Math.min(pos, t.n - 1);
      $('#teach-slider').value = pos;
      const ex = t.extras;
      // iterate path with drop steps marked
      ctx.strokeStyle = t.group.color;
      ctx.lineWidth = 1.2;
      ctx.beginPath();
      let started = false;
      for (let i = 0; i <= pos; i++) {
        const e = ex[i];
        if (!e || e.x0 == null) continue;
        started ? ctx.lineTo(X(e.x0), Y(e.x1)) : ctx.moveTo(X(e.x0), Y(e.x1));
        started = true;
      }
      ctx.stroke();
      ctx.strokeStyle = '#c00';
      ctx.lineWidth = 2;
      let dropsDrawn = 0;
      for (const i of t.drops) {
        if (i > pos) break;
        const e = ex[i];
        if (!e || e.x0 == null) continue;
        const x = X(e.x0), y = Y(e.x1);
        ctx.beginPath();
        ctx.moveTo(x - 5, y - 5);
        ctx.lineTo(x + 5, y + 5);
        ctx.moveTo(x + 5, y - 5);
        ctx.lineTo(x - 5, y + 5);
        ctx.stroke();
        dropsDrawn++;
      }
      // active vertices by weight at the current step
      const e = ex[pos] || {};
      const byKey = {};
      for (const v of G.verts) byKey[v.key] = v;
      let active = 0;
      for (const [k, w] of Object.entries(e)) {
        if (!k.startsWith('w:') || !(w > 0)) continue;
        const v = byKey[k.slice(2)];
        if (!v) continue;
        active++;
        ctx.fillStyle = alpha(t.group.color, 0.35);
        ctx.strokeStyle = t.group.color;
        ctx.lineWidth = 1;
        ctx.beginPath();
        ctx.arc(X(v.x), Y(v.y), 4 + 16 * Math.sqrt(w), 0, 2 * Math.PI);
        ctx.fill();
        ctx.stroke();
      }
      // the step being taken: FW vertex (green) and away vertex (orange)
      if (e.x0 != null) {
        const px = X(e.x0), py = Y(e.x1);
        const arrow = (tx, ty, color, dash) => {
          ctx.strokeStyle = color;
          ctx.setLineDash(dash);
          ctx.lineWidth = 1.5;
          ctx.beginPath();
          ctx.moveTo(px, py);
          ctx.lineTo(X(tx), Y(ty));
          ctx.stroke();
          ctx.setLineDash([]);
          ctx.fillStyle = color;
          ctx.beginPath();
          ctx.arc(X(tx), Y(ty), 5, 0, 2 * Math.PI);
          ctx.fill();
        };
        if (e.fw_x0 != null) arrow(e.fw_x0, e.fw_x1, '#2a2', []);
        if (e.away_x0 != null) arrow(e.away_x0, e.away_x1, '#e80', [5, 4]);
        ctx.fillStyle = '#000';
        ctx.beginPath();
        ctx.arc(px, py, 4, 0, 2 * Math.PI);
        ctx.fill();
      }
      const r = {
        k: t.cols.k[pos], step: t.step[pos], gamma: t.cols.gamma[pos], active: t.cols.active[pos], objective: t.cols.objective[pos], gap: t.cols.gap[pos],
      };
      $('#teach-step').textContent = `step ${pos + 1} / ${t.n}`;
      $('#teach-readout').textContent = `k = ${r.k} · ${r.step} step · γ = ${fmtCell(r.gamma, 4)} · |U| = ${r.active} · F = ${fmtCell(r.objective, 8)} · gap = ${fmtCell(r.gap, 3)}` +
        (e.x0 != null ? ` · x = (${fmtCell(e.x0, 5)}, ${fmtCell(e.x1, 5)})` : '');
      fwlab.teach = { frames: (fwlab.teach.frames || 0) + 1, drawn: true, pos, active, drops: dropsDrawn };
      timeline(t);
    }

    // timeline: one row per vertex that was ever active; bar height is the
    // weight; a red mark where a drop step removed the vertex.
    function timeline(t) {
      const cv = $('#teach-timeline');
      const ctx = cv.getContext('2d');
      const W = cv.width, H = cv.height;
      ctx.clearRect(0, 0, W, H);
      const keys = [...t.wkeys];
      const order = new Map(G.verts.map((v, i) => ['w:' + v.key, i]));
      keys.sort((a, b) => (order.has(a) ? order.get(a) : 1e9) - (order.has(b) ? order.get(b) : 1e9) || a.localeCompare(b));
      if (!keys.length) return;
      const left = 46, rowH = Math.min(24, (H - 10) / keys.length), n = t.n, plotW = W - left - 4;
      ctx.font = '10px sans-serif';
      keys.forEach((k, r) => {
        const y0 = 4 + r * rowH;
        ctx.fillStyle = '#555';
        ctx.fillText(k.slice(2, 9), 2, y0 + rowH * 0.7);
        ctx.fillStyle = '#f4f4f4';
        ctx.fillRect(left, y0, plotW, rowH - 2);
        ctx.fillStyle = t.group.color;
        for (let px = 0; px < plotW; px++) {
          const i = Math.floor((px / plotW) * n);
          const e = t.extras[i];
          const w = e && e[k];
          if (w > 0) ctx.fillRect(left + px, y0 + (rowH - 2) * (1 - w), 1, (rowH - 2) * w);
        }
        // drop marks: the vertex held weight before a drop step and none after
        ctx.fillStyle = '#c00';
        for (const i of t.drops) {
          const prev = t.extras[i - 1], cur = t.extras[i];
          if (prev && prev[k] > 0 && !(cur && cur[k] > 0)) ctx.fillRect(left + (i / n) * plotW - 1, y0, 3, rowH - 2);
        }
      });
      ctx.strokeStyle = '#000';
      ctx.beginPath();
      const cx = left + (pos / Math.max(1, n)) * plotW;
      ctx.moveTo(cx, 0);
      ctx.lineTo(cx, H);
      ctx.stroke();
    }

    return T;
  })();

  // ------------------------------------------------------- problem panels

  // Panels renders the problem-specific data of info.panels: numeric
  // matrices as heat maps (GFLASSO's true B, the task correlations), the
  // task graph from `edges` ({m, l, r} with nodes coloured by component),
  // numeric vectors as bars (a true β), lists of words, and the scalars as a
  // table (the SSVM data set's figures).
  const Panels = (function () {
    const isNum = (x) => typeof x === 'number' && isFinite(x);
    function isMatrix(v) {
      return Array.isArray(v) && v.length > 1 && v.every((r) => Array.isArray(r) && r.length === v[0].length && r.length > 0 && r.every(isNum));
    }
    const isVector = (v) => Array.isArray(v) && v.length > 1 && v.every(isNum);
    const TITLES = { B_true: 'true coefficients B (rows: features, columns: tasks)', corr: 'task correlations of Y', beta_true: 'true β' };
    function figure(name, node, caption) {
      return el('figure', { class: 'panel', 'data-panel': name }, node, el('figcaption', { text: caption }));
    }
    function heat(name, m) {
      const rows = m.length, cols = m[0].length;
      const cell = Math.max(2, Math.min(18, Math.floor(360 / Math.max(rows, cols))));
      const cv = el('canvas', { width: cols * cell, height: rows * cell, 'data-heatmap': name });
      const ctx = cv.getContext('2d');
      let amax = 0;
      for (const r of m) for (const x of r) amax = Math.max(amax, Math.abs(x));
      amax = amax || 1;
      m.forEach((r, i) =>
        r.forEach((x, j) => {
          const a = Math.min(1, Math.abs(x) / amax);
          ctx.fillStyle = x >= 0 ? `rgba(214,39,40,${a})` : `rgba(31,119,180,${a})`;
          ctx.fillRect(j * cell, i * cell, cell, cell);
        })
      );
      return figure(name, cv, `${TITLES[name] || name} (${rows}×${cols}, |max| = ${fmtCell(amax, 3)}; red +, blue −)`);
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
      return figure(name, cv, `${TITLES[name] || name} (${v.length} entries, |max| = ${fmtCell(amax, 3)})`);
    }
    function graph(name, edges, panels) {
      const E = edges.map((e) =>
        Array.isArray(e) ? { a: e[0], b: e[1], w: e.length > 2 ? e[2] : 1 } : { a: e.m != null ? e.m : e.from, b: e.l != null ? e.l : e.to, w: e.r != null ? e.r : e.w != null ? e.w : 1 }
      );
      let n = isMatrix(panels.corr) ? panels.corr.length : 0;
      for (const e of E) n = Math.max(n, e.a + 1, e.b + 1);
      const comp = new Array(n).fill(-1);
      (panels.components || []).forEach((c, ci) => Array.isArray(c) && c.forEach((i) => (comp[i] = ci)));
      const S = 360, cv = el('canvas', { width: S, height: S, 'data-graph': name });
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
      return figure(name, cv, `task graph: ${n} tasks, ${E.length} edges (width ∝ |correlation|, red +, blue −)${nc ? `, ${nc} components (node colours)` : ''}`);
    }
    function words(name, list) {
      const ul = el('ul', { class: 'words', 'data-words': name });
      for (const w of list.slice(0, 20)) {
        if (typeof w === 'string') ul.append(el('li', { text: w }));
        else ul.append(el('li', { text: Object.entries(w).map(([k, v]) => `${k}: ${v}`).join(' · ') }));
      }
      return figure(name, ul, name);
    }
    function table(name, obj) {
      const tb = el('tbody');
      for (const [k, v] of Object.entries(obj)) tb.append(el('tr', {}, el('th', { text: k }), el('td', { class: 'mono', text: typeof v === 'number' ? fmtCell(v, 6) : String(v) })));
      return figure(name, el('table', { class: 'kv' }, tb), name);
    }
    // The final estimates' panels, one entry per algorithm row:
    // {label, color, trace, replication, panels}.
    let instancePanels = null, results = [];
    function estimate(r, name, m) {
      const f = heat(name, m);
      const cv = $('canvas', f);
      cv.dataset.heatmap = 'estimate';
      cv.dataset.trace = r.trace;
      f.dataset.panel = `${name}@${r.trace}`;
      $('figcaption', f).textContent = `estimated ${name} of ${r.label}${r.replication ? `, replication ${r.replication}` : ''} ${$('figcaption', f).textContent.replace(/^[^(]*/, '')}`;
      f.classList.add('estimate');
      f.style.borderTop = `3px solid ${r.color}`;
      return f;
    }
    // decodedTable shows truth against prediction, the wrong letters marked.
    function decodedTable(r, list) {
      const tb = el('tbody');
      let errs = 0, letters = 0;
      for (const w of list) {
        const truth = String(w.truth || ''), pred = String(w.predicted || '');
        errs += w.errors || 0;
        letters += truth.length;
        const p = el('td', { class: 'mono' });
        for (let i = 0; i < pred.length; i++) p.append(pred[i] !== truth[i] ? el('span', { class: 'wrong', text: pred[i] }) : pred[i]);
        tb.append(el('tr', {}, el('td', { class: 'mono', text: truth }), p, el('td', { class: 'num', text: String(w.errors || 0) })));
      }
      const t = el('table', { class: 'decoded', 'data-decoded': String(r.trace) }, el('thead', {}, el('tr', {}, el('th', { text: 'truth' }), el('th', { text: 'predicted' }), el('th', { text: 'errors' }))), tb);
      const f = figure(`decoded@${r.trace}`, t, `decoded words, ${r.label}${r.replication ? ` (replication ${r.replication})` : ''}: ${errs} of ${letters} letters wrong`);
      f.style.borderTop = `3px solid ${r.color}`;
      return f;
    }
    function resultFigures() {
      const out = [];
      for (const r of results) {
        for (const [name, v] of Object.entries(r.panels || {})) {
          if (isMatrix(v)) out.push(estimate(r, name, v));
          else if (name === 'decoded' && Array.isArray(v)) out.push(decodedTable(r, v));
        }
      }
      return out;
    }
    function setResults(list) {
      results = list || [];
      render(instancePanels);
    }
    function render(panels) {
      instancePanels = panels;
      const body = $('#panel-body');
      const kids = [];
      const scalars = {};
      for (const [name, v] of Object.entries(panels || {})) {
        if (name === 'geometry' || name === 'components' || name === 'coef_layout') continue;
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
          if (Object.keys(sc).length) kids.push(table(name, sc));
        } else if (typeof v !== 'object') scalars[name] = v;
        else if (name === 'coef_shape' && Array.isArray(v)) scalars[name] = v.join(' × ');
      }
      if (Object.keys(scalars).length) kids.push(table('instance', scalars));
      // The estimates go right after the true B (where there is one).
      const est = resultFigures();
      const at = kids.findIndex((k) => k.dataset.panel === 'B_true');
      kids.splice(at >= 0 ? at + 1 : 0, 0, ...est);
      body.replaceChildren(...kids);
      $('#panels').hidden = kids.length === 0;
      fwlab.panels = kids.length;
      fwlab.resultPanels = est.length;
    }
    return { render, setResults };
  })();

  document.addEventListener('DOMContentLoaded', () => {
    const page = document.body.dataset.page;
    if (page === 'start' && $('#start-form')) initStart();
    if (page === 'run' && $('#run-page')) initRun();
  });
})();
