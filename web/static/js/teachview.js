// The teaching view's window arithmetic: zoom about a point, pan by a
// fraction of the window, and the last evaluated record. Pure functions,
// no DOM access (tested in the browser harness).

// zoomView scales the window view ({x0, x1, y0, y1}) by factor about the
// point (mx, my), which stays where it is on the screen. factor < 1 zooms
// in. The window stays between a millionth and 20 times home's size.
export function zoomView(view, home, mx, my, factor) {
  if (!(factor > 0) || !Number.isFinite(factor)) return view;
  const hw = home.x1 - home.x0, w = view.x1 - view.x0;
  const f = Math.min(Math.max(factor, (1e-6 * hw) / w), (20 * hw) / w);
  return {
    x0: mx - (mx - view.x0) * f,
    x1: mx + (view.x1 - mx) * f,
    y0: my - (my - view.y0) * f,
    y1: my + (view.y1 - my) * f,
  };
}

// panView moves the window with a drag of (fx, fy) of the canvas's width
// and height (screen y grows downwards, the plane's y upwards).
export function panView(view, fx, fy) {
  const dx = -fx * (view.x1 - view.x0), dy = fy * (view.y1 - view.y0);
  return { x0: view.x0 + dx, x1: view.x1 + dx, y0: view.y0 + dy, y1: view.y1 + dy };
}

// lastFinite is the largest index i ≤ p with a finite col[i]; -1 if none.
export function lastFinite(col, p) {
  for (let i = Math.min(p, col.length - 1); i >= 0; i--) if (Number.isFinite(col[i])) return i;
  return -1;
}
