/*
Package web is the dashboard's front end: the templ pages (start page, run
page, history, compare and sweep pages) and the embedded static assets (the vendored uPlot chart
library, the stylesheet and the page script, ES modules loaded from
static/app.js with no build step). The HTTP layer mounts
it with Mount; the pages talk to the JSON API and the websocket of package
server. Everything is compiled in with go:embed: no CDN, no npm at build time.

# Assets

uPlot is pinned by package.json and package-lock.json; vendor.sh (make vendor)
installs it with npm and copies its built files and licence into
static/vendor/, where they are committed. AssetURL adds each file's content
hash to its URL, so browsers may cache it for good; any other request for a
static file is revalidated through its ETag.

# Script

static/app.js is the entry module; each part of the page is a module of
static/js: form (start page), run (state, traces table, controls), stream
(websocket and catch-up), charts (uPlot setup, scales, shared x zoom,
decimation), events (drop and away marks), teaching, panels and export;
history, compare and sweep are the pages over the run store. The
logic that needs no page has no DOM access and is tested in the browser
harness of internal/e2e: decimate (decimation, smoothing, event density),
format (tick labels, metric names), schedule (m_k and the preview's axes),
rules (the form's rules), teachmath (the step in words) and lab (specs side
by side, sweep cells on their axes, medians, the heat map's colour scale,
sweep values as typed). The pages carry
no inline script or handler, so they work under script-src 'self'; every
request that changes state is sent as JSON.

# Start page

Presets come first and fill the form; the Start button stays in view
(sticky) with a summary of the form's errors, and Start with an invalid
field scrolls to the first one. Each algorithm row shows only the controls
its method uses, and the m_k preview has axes and reads out under the
pointer; "start paused" adds "start_paused": true to the spec.
The catalogue of problems and presets is rendered from the scenario registry
and embedded as JSON (the same names, defaults and rule texts as GET
/api/scenarios). The script checks the rules it can before submitting, with
the server's own words, and shows a rejected spec's {"error", "field"} at
the field. Submitting POSTs the spec and opens /runs/{id}?spec=…: the URL
holds the whole spec, and opening it with an unknown id submits it again.
Data files are named by path (kind Path parameters), read on the server;
beside each path field a file picker uploads a file (POST /api/uploads, in
the format the parameter's help names: csv, svmlight or ocr) and fills the
field with the stored path, or shows the server's file:line:col error under
the field. Uploaded files stay on the server until it stops.

# Run page

The script follows /ws/runs/{id}, keeps every record in per-trace columns,
groups the replications of each algorithm row into a median with a min–max
band, and draws decimated views (minimum and maximum per bucket; the first
records are kept one by one for log-x). Charts: objective (F − F* when the
instance knows F*), duality gap, active-set size, batch size, step size, the
sampled-gradient error, and one chart per extra metric (SSVM errors, dual,
…), each with a human title and a one-line explanation; the step size is
drawn as points. The objective can show F, F − F* (when known) or F − the
best F seen; a smoothing slider (an EMA of the drawn points, as TensorBoard
does) keeps the raw line faint. A box zoom on one chart sets every chart's
x range and leaves each chart's y range its own; a double click restores
every chart, which then follows the stream again. Log-y is a property of
each metric (and of the user's choice, kept across reloads), never of the
data seen so far. Drop and away steps are marked in lanes above each plot,
one per algorithm in its colour, as a density strip where they crowd. The
page has one legend; the traces table has a row per algorithm, its
replications behind a toggle. The run line shows the server's record count
beside the page's, and "catching up" while the page is behind. A client that
falls behind or misses records fetches /api/runs/{id}/trace?format=jsonl.
A chart's PNG carries its title, explanation and legend.

Problem panels (info.panels) understood by the script:
  - geometry (2-D teaching view): {"vertices": [[x, y], …], "keys": [vertex
    key, …], "Q": [[a, b], [b, c]], "center": [x, y], "xstar": [x, y]}, with
    F(x) = ½(x − c)ᵀQ(x − c) (+ bᵀx when "b" is given); records carry
    extra.x0/x1 (iterate), fw_x0/fw_x1, away_x0/away_x1 and w:<key> weights
    (proximal methods: at_x0/x1 where the gradient was taken and
    from_x0/x1 the gradient step, projected to x0/x1); the teaching view
    sits beside the charts, draws two traces on one polygon with labelled
    vertices and a key, and writes each step out in words;
  - numeric matrices as heat maps (GFLASSO's B_true, corr), numeric vectors
    as bars, "edges" ([{m, l, r}, …] with "components") as the task graph,
    lists of strings (decoded words) as lists, objects of scalars as tables.

Each finished trace of the run status may carry "panels" of its final
estimate (scenarios.ResultPanels); the stream's status only marks them
(has_panels) and the script fetches GET /api/runs/{id} for them. For every
algorithm row the first
replication that has them is drawn: matrices as heat maps beside the true B
(canvas data-heatmap="estimate", data-trace), "decoded" ([{truth, predicted,
errors}, …]) as one table of the distinct words, a column per algorithm,
with the wrong letters marked (table data-decoded). GFLASSO's components,
bounds and oracles are one table of blocks; the instance's scalars are named
in words.

# Browser tests

window.fwlab exposes what the tests in internal/e2e read: per chart the
points received, rows drawn, drop and away marks drawn, whether a band is
drawn (fwlab.charts), the traces' record counts (fwlab.traces), the run's
status, the teaching view's state, the page's time spent parsing, appending
and drawing (fwlab.perf), the record counts (fwlab.sync), and helpers (the
pure modules' functions, bandProbe, markProbe, groupStat, chartScale,
pngPreview).
*/
package web
