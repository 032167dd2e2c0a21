// DOM helpers and the JSON API client shared by the page's modules.

export const $ = (sel, root) => (root || document).querySelector(sel);
export const $$ = (sel, root) => Array.from((root || document).querySelectorAll(sel));

// el builds an element: attrs may hold class, text, style (an object,
// applied through the CSSOM so that a strict CSP allows it), on<event>
// listeners, and plain attributes.
export function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null) continue;
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else if (k === 'style') Object.assign(e.style, v);
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of kids) if (c != null) e.append(c);
  return e;
}

// The page's state for the browser tests and the curious.
export const fwlab = (window.fwlab = window.fwlab || { charts: {}, traces: [], status: null, exports: [] });

// api calls the JSON API. Every request that changes state is sent as
// JSON (the server refuses others), with an empty object when it has no
// body.
export async function api(method, url, body) {
  const opt = { method, headers: {} };
  if (method !== 'GET' && method !== 'HEAD') {
    opt.headers['Content-Type'] = 'application/json';
    opt.body = JSON.stringify(body === undefined ? {} : body);
  }
  return answer(await fetch(url, opt));
}

// catalogue returns the catalogue GET /api/scenarios serves (the problems
// and the algorithm table, from which the pages take every rule of an
// algorithm), fetched once per page; {} when the server does not give it.
let cataloguePromise = null;
export function catalogue() {
  if (!cataloguePromise) {
    cataloguePromise = api('GET', '/api/scenarios').then(
      (res) => (res.ok && res.data ? res.data : {}),
      () => ({}),
    );
  }
  return cataloguePromise;
}

// answer reads a response's JSON body ({error} with the text when it is not
// JSON; null when it is empty).
async function answer(res) {
  const text = await res.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch (e) {
    data = { error: text.trim() || `the server answered ${res.status}` };
  }
  return { ok: res.ok, status: res.status, data };
}

// postRaw posts a body as it is (a file or form data) and reads the answer
// as api does; a server that cannot be reached or answers nothing is an
// {error} too.
export async function postRaw(url, body, headers = {}) {
  let res;
  try {
    res = await answer(await fetch(url, { method: 'POST', headers, body }));
  } catch (e) {
    return { ok: false, status: 0, data: { error: `could not reach the server: ${e.message}` } };
  }
  if (res.data === null) res.data = { error: `the server answered ${res.status}` };
  return res;
}

export function download(name, blob) {
  const a = el('a', { href: URL.createObjectURL(blob), download: name });
  document.body.append(a);
  a.click();
  setTimeout(() => {
    URL.revokeObjectURL(a.href);
    a.remove();
  }, 1000);
}
