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

export function download(name, blob) {
  const a = el('a', { href: URL.createObjectURL(blob), download: name });
  document.body.append(a);
  a.click();
  setTimeout(() => {
    URL.revokeObjectURL(a.href);
    a.remove();
  }, 1000);
}
