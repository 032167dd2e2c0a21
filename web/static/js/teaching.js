// The teaching view of 2-D problems: the polygon with its labelled
// vertices, level sets, the minimiser, and up to two traces side by side,
// each on its own polygon under one step slider (iterate path, active
// vertices by weight, the FW and away vertices of the step, drop steps;
// proximal methods as a path of gradient steps and projections), a key,
// the step in words with F and the gap, the active-set timeline,
// step-by-step play, wheel or pinch zoom and drag to pan (shared by both
// polygons, with a reset), and a presentation mode for a lecture hall
// (large type, the polygons and one chart; space steps, p plays or
// pauses, Esc leaves). It reads panels.geometry: {vertices:
// [[x,y]…] or [{key,x,y}…], keys?: [...], Q, center (or c), b?, xstar?}
// with F(x) = ½(x−c)ᵀQ(x−c) + bᵀx.

import { $, $$, el, fwlab } from './util.js';
import { fmtCell, alpha } from './format.js';
import { describeStep } from './teachmath.js';
import { zoomView, panView, lastFinite } from './teachview.js';

const FW = '#2a9d2a', AWAY = '#e07b00', DROP = '#c00';

let S = null, G = null, on = false, pos = 0, follow = true, timer = null, contours = null, view = null, home = null, contourView = null;
fwlab.teach = { frames: 0, drawn: false };

export function parseGeometry(g) {
  const verts = [];
  (g.vertices || []).forEach((v, i) => {
    if (Array.isArray(v)) verts.push({ key: (g.keys && g.keys[i]) || 'v' + i, x: +v[0], y: +v[1] });
    else if (v && typeof v === 'object') verts.push({ key: v.key != null ? String(v.key) : (g.keys && g.keys[i]) || 'v' + i, x: +(v.x != null ? v.x : v[0]), y: +(v.y != null ? v.y : v[1]) });
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

export function init(state, geometry) {
  if (on) return; // once: the hello of every (re)connection repeats the panels
  S = state;
  G = parseGeometry(geometry);
  if (G.verts.length < 2) return;
  on = true;
  $('#teaching').hidden = false;
  $('#run-body').classList.add('with-teaching');
  const xs = G.verts.map((v) => v.x), ys = G.verts.map((v) => v.y);
  const x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(...ys), y1 = Math.max(...ys);
  const span = Math.max(x1 - x0, y1 - y0) || 1;
  const cx = (x0 + x1) / 2, cy = (y0 + y1) / 2;
  home = { x0: cx - 0.62 * span, x1: cx + 0.62 * span, y0: cy - 0.62 * span, y1: cy + 0.62 * span };
  view = { ...home };
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
  $('#teach-fwd').addEventListener('click', () => stepBy(1));
  $('#teach-play').addEventListener('click', () => (timer ? stop() : play()));
  $('#teach-speed').addEventListener('change', () => timer && (stop(), play()));
  $('#teach-trace').addEventListener('change', () => draw());
  $('#teach-trace2').addEventListener('change', () => draw());
  $('#teach-reset').addEventListener('click', () => resetView());
  $('#teach-present').addEventListener('click', () => present(!document.body.classList.contains('presenting')));
  for (const cv of planes()) bindZoom(cv);
  bindPresentKeys();
  key();
  // The polygon from the start, before any record (k = 0 of a run that
  // starts paused, or a queued run).
  draw();
}

const planes = () => [$('#teach-canvas'), $('#teach-canvas2')];

// setView changes the window both polygons show, and redraws.
function setView(v) {
  view = v;
  fwlab.teach.view = { ...view };
  draw();
}

function resetView() {
  setView({ ...home });
}

// canvasPoint turns a pointer position on a canvas into the plane's
// coordinates.
function canvasPoint(cv, ev) {
  const r = cv.getBoundingClientRect();
  const fx = (ev.clientX - r.left) / r.width, fy = (ev.clientY - r.top) / r.height;
  return [view.x0 + fx * (view.x1 - view.x0), view.y1 - fy * (view.y1 - view.y0)];
}

// bindZoom: the wheel (and a trackpad's pinch, which the browser sends as
// a wheel with ctrlKey) zooms about the pointer; one pointer dragging pans;
// two pointers pinch.
function bindZoom(cv) {
  cv.addEventListener(
    'wheel',
    (ev) => {
      ev.preventDefault();
      const [mx, my] = canvasPoint(cv, ev);
      const unit = ev.deltaMode === 1 ? 16 : ev.deltaMode === 2 ? 400 : 1;
      setView(zoomView(view, home, mx, my, Math.exp(ev.deltaY * unit * (ev.ctrlKey ? 0.01 : 0.0015))));
    },
    { passive: false }
  );
  const pts = new Map();
  let last = null;
  cv.addEventListener('pointerdown', (ev) => {
    cv.setPointerCapture(ev.pointerId);
    pts.set(ev.pointerId, { x: ev.clientX, y: ev.clientY });
    last = null;
  });
  const end = (ev) => {
    pts.delete(ev.pointerId);
    last = null;
  };
  cv.addEventListener('pointerup', end);
  cv.addEventListener('pointercancel', end);
  cv.addEventListener('pointermove', (ev) => {
    if (!pts.has(ev.pointerId)) return;
    const r = cv.getBoundingClientRect();
    const prev = pts.get(ev.pointerId);
    pts.set(ev.pointerId, { x: ev.clientX, y: ev.clientY });
    if (pts.size === 1) {
      setView(panView(view, (ev.clientX - prev.x) / r.width, (ev.clientY - prev.y) / r.height));
      return;
    }
    const [a, b] = [...pts.values()];
    const d = Math.hypot(a.x - b.x, a.y - b.y);
    if (last && d > 0) {
      const [mx, my] = canvasPoint(cv, { clientX: (a.x + b.x) / 2, clientY: (a.y + b.y) / 2 });
      setView(zoomView(view, home, mx, my, last / d));
    }
    last = d;
  });
  cv.addEventListener('dblclick', () => resetView());
}

// present switches the lecture hall's presentation mode: large type, the
// polygons and one chart (the objective), keys to step and play.
function present(onOff) {
  document.body.classList.toggle('presenting', onOff);
  $('#teach-present').textContent = onOff ? 'Leave presentation' : 'Present';
  $('#teach-present').setAttribute('aria-pressed', String(onOff));
  fwlab.teach.presenting = onOff;
  // The keys are the page's again, not the button's that was pressed
  // (Space on a focused Present button would present again).
  if (document.activeElement && document.activeElement !== document.body && document.activeElement.blur) document.activeElement.blur();
  // The charts take their new width.
  window.dispatchEvent(new Event('resize'));
  draw();
}

function bindPresentKeys() {
  document.addEventListener('keydown', (ev) => {
    if (!document.body.classList.contains('presenting') || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const t = ev.target;
    if (t && /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName || '') && t.type !== 'range') return;
    let done = true;
    if (ev.key === ' ' || ev.key === 'ArrowRight') {
      if (timer) stop();
      stepBy(1);
    } else if (ev.key === 'ArrowLeft') {
      if (timer) stop();
      stepBy(-1);
    } else if (ev.key === 'p') timer ? stop() : play();
    else if (ev.key === 'Escape') present(false);
    else if (ev.key === '0') resetView();
    else done = false;
    if (done) ev.preventDefault();
  });
}

// stepBy moves the slider; past the last record of a paused run, a step
// forward asks the server for the next iteration.
function stepBy(d) {
  follow = false;
  const n = maxN();
  if (d > 0 && pos >= n - 1 && S.status && S.status.status === 'paused') {
    follow = true;
    const b = $('#btn-step');
    if (b && !b.disabled) b.click();
    return;
  }
  pos = Math.max(0, Math.min(n - 1, pos + d));
  draw();
}

function play() {
  follow = false;
  if (pos >= maxN() - 1) pos = 0;
  $('#teach-play').textContent = 'Pause';
  timer = setInterval(() => {
    if (pos >= maxN() - 1) return stop();
    pos++;
    draw();
  }, 1000 / +$('#teach-speed').value);
}

function stop() {
  clearInterval(timer);
  timer = null;
  $('#teach-play').textContent = 'Play';
}

// shown returns the traces drawn: the first, and the one beside it.
function shown() {
  const out = [];
  for (const id of ['#teach-trace', '#teach-trace2']) {
    const v = $(id).value;
    const t = v === '' ? null : S.traces[+v];
    if (t && !out.includes(t)) out.push(t);
  }
  return out;
}

function maxN() {
  return Math.max(0, ...shown().map((t) => t.n));
}

export function update() {
  if (!on) return;
  const sel = $('#teach-trace'), sel2 = $('#teach-trace2');
  const have = new Set($$('option', sel).map((o) => o.value));
  for (const t of S.traces) {
    if (!t || have.has(String(t.meta.trace)) || !t.hasXY) continue;
    const label = t.group.label + (t.group.traces.length > 1 ? ` · rep ${t.meta.replication}` : '');
    sel.append(el('option', { value: t.meta.trace, text: label }));
    sel2.append(el('option', { value: t.meta.trace, text: label }));
    if (sel.options.length === 1) sel.value = String(t.meta.trace);
    // The second trace drawn by default: the first of another algorithm.
    else if (sel2.value === '' && !sel2.dataset.touched && S.traces[+sel.value] && S.traces[+sel.value].group !== t.group) sel2.value = String(t.meta.trace);
  }
  if (!sel2._watch) {
    sel2._watch = true;
    sel2.addEventListener('change', () => (sel2.dataset.touched = '1'));
  }
  const n = maxN();
  $('#teach-slider').max = Math.max(0, n - 1);
  if (follow) pos = Math.max(0, n - 1);
  // While a long run streams in, the drawing follows at a few frames per
  // second: the charts are the live view, this one is for stepping.
  // A paused run (stepped one record at a time) is drawn at once; a
  // throttled frame is drawn when its time comes, so that the last records
  // are never left undrawn.
  const now = performance.now();
  const streaming = S.status && S.status.status === 'running';
  if (follow && streaming && !S.done && now - lastLive < 400) {
    if (!trailing) trailing = setTimeout(() => ((trailing = 0), update()), 400 - (now - lastLive));
    return;
  }
  clearTimeout(trailing);
  trailing = 0;
  lastLive = now;
  draw();
}
let lastLive = 0, trailing = 0;

// levelSets traces contour lines of F by marching squares on a grid over
// the window shown, at levels spread over the values F takes there (up to
// its largest at a vertex), so that a zoomed window has its own.
function levelSets() {
  const N = 90, vals = [];
  let lo = Infinity, top = -Infinity;
  for (let j = 0; j <= N; j++)
    for (let i = 0; i <= N; i++) {
      const x = view.x0 + ((view.x1 - view.x0) * i) / N, y = view.y0 + ((view.y1 - view.y0) * j) / N;
      const f = F(x, y);
      vals.push(f);
      lo = Math.min(lo, f);
      top = Math.max(top, f);
    }
  let hi = -Infinity;
  for (const v of G.verts) hi = Math.max(hi, F(v.x, v.y));
  hi = Math.min(hi, top);
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
          if (fa < 0 !== fb < 0) {
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

// key explains every line and mark of the drawing.
function key() {
  const sw = (style, text) => el('span', { class: 'key-item' }, el('span', { class: 'key-sw ' + style }), text);
  $('#teach-key').replaceChildren(
    sw('k-poly', 'feasible polygon P, vertices v0, v1, …'),
    sw('k-level', 'level sets of F'),
    sw('k-xstar', 'minimiser x*'),
    sw('k-path', 'iterate path (algorithm colour)'),
    sw('k-iter', 'current iterate'),
    sw('k-active', 'active vertex, area ∝ weight'),
    sw('k-fw', 'FW vertex of the step'),
    sw('k-away', 'away vertex of the step'),
    sw('k-drop', 'drop step'),
    sw('k-prox', 'proximal: gradient step (dashed), projection onto P (dotted)')
  );
}

function draw() {
  if (!on) return;
  if (contourView !== view) {
    contours = levelSets();
    contourView = view;
  }
  const ts = shown();
  const [cv1, cv2] = planes();
  cv2.hidden = ts.length < 2;
  $('#teach-planes').classList.toggle('two', ts.length >= 2);
  const n = maxN();
  pos = Math.max(0, Math.min(pos, Math.max(0, n - 1)));
  $('#teach-slider').value = pos;
  const lines = [];
  let active = 0, dropsDrawn = 0;
  const drawn = [];
  [cv1, cv2].forEach((cv, i) => {
    if (i && ts.length < 2) return;
    const got = drawPlane(cv, ts[i] ? [ts[i]] : [], lines);
    if (i === 0) active = got.active;
    dropsDrawn += got.drops;
    drawn.push(ts[i] ? ts[i].meta.trace : null);
    cv.dataset.trace = ts[i] ? String(ts[i].meta.trace) : '';
  });
  const caps = $$('.teach-cap');
  caps.forEach((c, i) => {
    const t = ts[i];
    c.hidden = !t || ts.length < 2;
    if (t) c.replaceChildren(el('span', { class: 'swatch', style: { background: t.group.color } }), ` ${t.group.label.split(' (')[0]}${t.group.traces.length > 1 ? ` · rep ${t.meta.replication}` : ''}`);
  });
  fwlab.teach.view = { ...view };
  fwlab.teach.polygon = true;
  if (!ts.length || !n) {
    $('#teach-step').textContent = n ? '' : 'k = 0: waiting for the first record';
    return;
  }
  $('#teach-step').textContent = `step ${pos + 1} / ${n}`;
  $('#teach-readout').replaceChildren(
    ...lines.map((l) =>
      el(
        'p',
        { class: 'teach-line', 'data-trace': String(l.t.meta.trace) },
        el('span', { class: 'swatch', style: { background: l.color } }),
        ' ',
        el('strong', { text: `${l.t.group.label.split(' (')[0]}, k = ${l.k}: ` }),
        el('span', { class: 'words', text: l.words }),
        el('br'),
        el('span', { class: 'muted mono stats', text: l.stats })
      )
    )
  );
  fwlab.teach = { ...fwlab.teach, frames: (fwlab.teach.frames || 0) + 1, drawn: true, pos, active, drops: dropsDrawn, traces: ts.map((t) => t.meta.trace), planes: drawn, algos: ts.map((t) => t.meta.algo), words: lines.map((l) => l.words), stats: lines.map((l) => l.stats), ks: lines.map((l) => l.k) };
  timeline(ts);
}

const UNIT = 520;

// fit gives a canvas as many pixels as it shows (at least 260 a side).
function fit(cv) {
  const w = cv.getBoundingClientRect().width;
  if (!(w > 0)) return;
  const px = Math.max(260, Math.round(w * (devicePixelRatio || 1)));
  if (cv.width !== px) {
    cv.width = px;
    cv.height = px;
  }
}

// drawPlane draws the polygon, its level sets and the traces ts at the
// step shown on one canvas; it adds each trace's readout to lines.
function drawPlane(cv, ts, lines) {
  fit(cv);
  const ctx = cv.getContext('2d');
  // Drawn in units of a 520 px square, scaled to the canvas: marks and
  // type grow with the canvas (a projector's presentation mode).
  ctx.setTransform(cv.width / UNIT, 0, 0, cv.height / UNIT, 0, 0);
  const W = UNIT, H = UNIT;
  // Type for the back of a lecture hall while presenting.
  const big = document.body.classList.contains('presenting') ? 1.9 : 1;
  const X = (x) => ((x - view.x0) / (view.x1 - view.x0)) * W;
  const Y = (y) => H - ((y - view.y0) / (view.y1 - view.y0)) * H;
  ctx.clearRect(0, 0, W, H);
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, W, H);
  ctx.beginPath();
  G.verts.forEach((v, i) => (i ? ctx.lineTo(X(v.x), Y(v.y)) : ctx.moveTo(X(v.x), Y(v.y))));
  ctx.closePath();
  ctx.fillStyle = '#eef3fa';
  ctx.fill();
  ctx.strokeStyle = '#345';
  ctx.lineWidth = 1.5;
  ctx.stroke();
  ctx.strokeStyle = 'rgba(120,120,120,0.4)';
  ctx.lineWidth = 1;
  for (const seg of contours) {
    ctx.beginPath();
    for (let i = 0; i + 1 < seg.length; i += 2) {
      ctx.moveTo(X(seg[i][0]), Y(seg[i][1]));
      ctx.lineTo(X(seg[i + 1][0]), Y(seg[i + 1][1]));
    }
    ctx.stroke();
  }
  if (G.xstar) {
    ctx.strokeStyle = '#000';
    ctx.lineWidth = 1.2;
    ctx.strokeRect(X(G.xstar[0]) - 4, Y(G.xstar[1]) - 4, 8, 8);
    ctx.fillStyle = '#000';
    ctx.font = `${Math.round(12 * big)}px sans-serif`;
    ctx.fillText('x*', X(G.xstar[0]) + 7, Y(G.xstar[1]) + 13);
  }
  // Vertices with their labels, outside the polygon.
  const cx = G.verts.reduce((s, v) => s + v.x, 0) / G.verts.length, cy = G.verts.reduce((s, v) => s + v.y, 0) / G.verts.length;
  ctx.font = `600 ${Math.round(13 * big)}px sans-serif`;
  ctx.textAlign = 'center';
  ctx.textBaseline = 'middle';
  for (const v of G.verts) {
    ctx.fillStyle = '#345';
    ctx.beginPath();
    ctx.arc(X(v.x), Y(v.y), 3, 0, 2 * Math.PI);
    ctx.fill();
    const d = Math.hypot(X(v.x) - X(cx), Y(v.y) - Y(cy)) || 1;
    ctx.fillText(v.key, X(v.x) + ((X(v.x) - X(cx)) / d) * 16 * big, Y(v.y) + ((Y(v.y) - Y(cy)) / d) * 16 * big);
  }
  ctx.textAlign = 'start';
  ctx.textBaseline = 'alphabetic';
  if (!ts.length || !maxN()) return { active: 0, drops: 0 };
  const byKey = {};
  for (const v of G.verts) byKey[v.key] = v;
  let active = 0, dropsDrawn = 0;
  ts.forEach((t, ti) => {
    const ex = t.extras;
    const p = Math.min(pos, t.n - 1);
    const color = t.group.color;
    const prox = t.family === 'prox' || t.step[p] === 'prox';
    // The iterate path: one polyline, points closer than half a pixel to
    // the last one drawn skipped.
    ctx.lineWidth = 1.4;
    ctx.strokeStyle = color;
    ctx.beginPath();
    let started = false, lx = NaN, ly = NaN;
    for (let i = 0; i <= p; i++) {
      const e = ex[i];
      if (!e || e.x0 == null) continue;
      const px = X(e.x0), py = Y(e.x1);
      if (i !== p && Math.abs(px - lx) < 0.5 && Math.abs(py - ly) < 0.5) continue;
      lx = px;
      ly = py;
      started ? ctx.lineTo(px, py) : ctx.moveTo(px, py);
      started = true;
    }
    ctx.stroke();
    // Proximal methods, for the last steps up to the one shown: the
    // momentum (FISTA: from the last iterate to the point where the
    // gradient is taken), the gradient step (dashed) and the projection
    // back onto P (dotted).
    if (prox) {
      for (let i = Math.max(1, p - 150); i <= p; i++) {
        const e = ex[i], prev = ex[i - 1];
        if (!e || !prev || e.from_x0 == null || prev.x0 == null) continue;
        const ax = e.at_x0 != null ? e.at_x0 : prev.x0, ay = e.at_x0 != null ? e.at_x1 : prev.x1;
        if (ax !== prev.x0 || ay !== prev.x1) {
          ctx.setLineDash([1, 3]);
          ctx.strokeStyle = 'rgba(0,0,0,0.35)';
          ctx.beginPath();
          ctx.moveTo(X(prev.x0), Y(prev.x1));
          ctx.lineTo(X(ax), Y(ay));
          ctx.stroke();
        }
        ctx.setLineDash([4, 3]);
        ctx.strokeStyle = alpha(color, 0.6);
        ctx.beginPath();
        ctx.moveTo(X(ax), Y(ay));
        ctx.lineTo(X(e.from_x0), Y(e.from_x1));
        ctx.stroke();
        ctx.setLineDash([1.5, 2.5]);
        ctx.beginPath();
        ctx.moveTo(X(e.from_x0), Y(e.from_x1));
        ctx.lineTo(X(e.x0), Y(e.x1));
        ctx.stroke();
        ctx.setLineDash([]);
        ctx.strokeStyle = color;
        ctx.lineWidth = 1;
        ctx.strokeRect(X(e.from_x0) - 2, Y(e.from_x1) - 2, 4, 4);
      }
    }
    ctx.strokeStyle = DROP;
    ctx.lineWidth = 2;
    for (const i of t.drops) {
      if (i > p) break;
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
    const e = ex[p] || {};
    for (const [k, w] of Object.entries(e)) {
      if (!k.startsWith('w:') || !(w > 0)) continue;
      const v = byKey[k.slice(2)];
      if (!v) continue;
      if (ti === 0) active++;
      ctx.fillStyle = alpha(color, 0.25);
      ctx.strokeStyle = color;
      ctx.lineWidth = 1.2;
      ctx.setLineDash(ti ? [3, 2] : []);
      ctx.beginPath();
      ctx.arc(X(v.x), Y(v.y), 4 + 16 * Math.sqrt(w), 0, 2 * Math.PI);
      ctx.fill();
      ctx.stroke();
      ctx.setLineDash([]);
    }
    if (e.x0 != null) {
      const px = X(e.x0), py = Y(e.x1);
      const arrow = (tx, ty, c, dash) => {
        ctx.strokeStyle = c;
        ctx.setLineDash(dash);
        ctx.lineWidth = 1.6;
        ctx.beginPath();
        ctx.moveTo(px, py);
        ctx.lineTo(X(tx), Y(ty));
        ctx.stroke();
        ctx.setLineDash([]);
        ctx.fillStyle = c;
        ctx.beginPath();
        ctx.arc(X(tx), Y(ty), 5, 0, 2 * Math.PI);
        ctx.fill();
      };
      if (e.fw_x0 != null) arrow(e.fw_x0, e.fw_x1, FW, []);
      if (e.away_x0 != null) arrow(e.away_x0, e.away_x1, AWAY, [5, 4]);
      ctx.fillStyle = '#000';
      ctx.strokeStyle = color;
      ctx.lineWidth = 2;
      ctx.beginPath();
      ctx.arc(px, py, 4.5, 0, 2 * Math.PI);
      ctx.fill();
      ctx.stroke();
    }
    const rec = { k: t.cols.k[p], step: t.step[p], gamma: t.cols.gamma[p] };
    const words = describeStep(rec, e, p > 0 ? ex[p - 1] : null, G.verts);
    lines.push({ t, color, k: rec.k, words, stats: `|U| = ${t.cols.active[p]} · ${evaluated(t, p)}` + (e.x0 != null ? ` · x = (${fmtCell(e.x0, 4)}, ${fmtCell(e.x1, 4)})` : '') });
  });
  return { active, drops: dropsDrawn };
}

// evaluated writes F and the gap at record p, or, where p was not
// evaluated (a run left to its cadence), those of the last record before
// it that was, saying which.
function evaluated(t, p) {
  const i = lastFinite(t.cols.objective, p);
  if (i < 0) return 'F and gap: not evaluated yet';
  const at = i === p ? '' : ` (at k = ${t.cols.k[i]})`;
  return `F = ${fmtCell(t.cols.objective[i], 8)} · gap = ${fmtCell(t.cols.gap[i], 3)}${at}`;
}

// timeline: one row per vertex that was ever active, labelled as on the
// polygon; per trace a bar whose height is the weight; a red mark where a
// drop step removed the vertex.
function timeline(ts) {
  const cv = $('#teach-timeline');
  const ctx = cv.getContext('2d');
  const W = cv.width, H = cv.height;
  ctx.clearRect(0, 0, W, H);
  const set = new Set();
  for (const t of ts) for (const k of t.wkeys) set.add(k);
  const keys = [...set];
  const order = new Map(G.verts.map((v, i) => ['w:' + v.key, i]));
  keys.sort((a, b) => (order.has(a) ? order.get(a) : 1e9) - (order.has(b) ? order.get(b) : 1e9) || a.localeCompare(b));
  if (!keys.length) return;
  const n = maxN();
  const left = 40, rowH = Math.min(28, (H - 8) / keys.length), plotW = W - left - 4;
  const lane = (rowH - 3) / ts.length;
  ctx.font = '600 11px sans-serif';
  keys.forEach((k, r) => {
    const y0 = 4 + r * rowH;
    ctx.fillStyle = '#345';
    ctx.fillText(k.slice(2, 9), 4, y0 + rowH * 0.6);
    ctx.fillStyle = '#f4f4f4';
    ctx.fillRect(left, y0, plotW, rowH - 3);
    ts.forEach((t, ti) => {
      const ly = y0 + ti * lane;
      ctx.fillStyle = t.group.color;
      for (let px = 0; px < plotW; px++) {
        const i = Math.floor((px / plotW) * n);
        const e = i < t.n ? t.extras[i] : null;
        const w = e && e[k];
        if (w > 0) ctx.fillRect(left + px, ly + lane * (1 - w), 1, lane * w);
      }
      ctx.fillStyle = DROP;
      for (const i of t.drops) {
        const prev = t.extras[i - 1], cur = t.extras[i];
        if (prev && prev[k] > 0 && !(cur && cur[k] > 0)) ctx.fillRect(left + (i / n) * plotW - 1, ly, 3, lane);
      }
    });
  });
  ctx.strokeStyle = '#000';
  ctx.beginPath();
  const x = left + (pos / Math.max(1, n)) * plotW;
  ctx.moveTo(x, 0);
  ctx.lineTo(x, H);
  ctx.stroke();
}
