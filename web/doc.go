/*
Package web is the dashboard's front end: the templ pages (start page and
live run page) and the embedded static assets (the vendored uPlot chart
library, the stylesheet and one script, static/app.js). The HTTP layer mounts
it with Mount; the pages talk to the JSON API and the websocket of package
server. Everything is compiled in with go:embed: no CDN, no npm at build time.

# Assets

uPlot is pinned by package.json and package-lock.json; vendor.sh (make vendor)
installs it with npm and copies its built files and licence into
static/vendor/, where they are committed. AssetURL adds each file's content
hash to its URL, so browsers may cache it for good; any other request for a
static file is revalidated through its ETag.

# Start page

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
…). Drop steps are marked along the top of each chart, away steps along the
bottom. A client that falls behind or misses records fetches
/api/runs/{id}/trace?format=jsonl.

Problem panels (info.panels) understood by the script:
  - geometry (2-D teaching view): {"vertices": [[x, y], …], "keys": [vertex
    key, …], "Q": [[a, b], [b, c]], "center": [x, y], "xstar": [x, y]}, with
    F(x) = ½(x − c)ᵀQ(x − c) (+ bᵀx when "b" is given); records carry
    extra.x0/x1 (iterate), fw_x0/fw_x1, away_x0/away_x1 and w:<key> weights;
  - numeric matrices as heat maps (GFLASSO's B_true, corr), numeric vectors
    as bars, "edges" ([{m, l, r}, …] with "components") as the task graph,
    lists of strings (decoded words) as lists, objects of scalars as tables.

Each finished trace of the run status may carry "panels" of its final
estimate (scenarios.ResultPanels); the stream's status only marks them
(has_panels) and the script fetches GET /api/runs/{id} for them. For every
algorithm row the first
replication that has them is drawn: matrices as heat maps beside the true B
(canvas data-heatmap="estimate", data-trace), "decoded" ([{truth, predicted,
errors}, …]) as a table with the wrong letters marked (table data-decoded).

# Browser tests

window.fwlab exposes what the tests in internal/e2e read: per chart the
points received, rows drawn, drop and away marks drawn, whether a band is
drawn (fwlab.charts), the traces' record counts (fwlab.traces), the run's
status, the teaching view's state, the page's time spent parsing, appending
and drawing (fwlab.perf), and helpers (scheduleSize, fmtNum, Decimator,
bandProbe, groupStat, chartScale).
*/
package web
