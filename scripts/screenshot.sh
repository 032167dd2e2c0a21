#!/bin/sh
# Makes the README's screenshots in docs/img/ (or DIR): dashboard.png, the
# start page, and a picture of each page at 1400×1000 and at 1024×768,
# PAGE-1400x1000.png and PAGE-1024x768.png for PAGE in
#   start    the start page
#   run      a finished LASSO run, ssfw-as against FISTA over 3 replications
#   history  History (/runs), the runs made here
#   compare  that run compared with a second one (/compare?runs=A,B)
#   sweep    a 2×2 sweep's page (ρ of ssfw-as × its step rule), once done
#   teaching the run page of the "away steps vs zig-zag" preset, with the
#            teaching view beside (1400) or below (1024) the traces
#   present  that run's teaching view in presentation mode (its Present
#            button, pressed by scripts/present through Chromium's DevTools)
# The dashboard is built and served from a run store in memory on a free
# loopback port; the runs and the sweep are made through its JSON API and
# waited for until done; headless Chromium takes each picture once the page's
# scripts have run (5 s of virtual time, 15 s for a run page loading its
# records); the server is stopped afterwards.
# A picture over 250 KB is reduced with pngquant when it is installed.
# Usage: scripts/screenshot.sh [DIR]
set -eu
cd "$(dirname "$0")/.."
dir=${1:-docs/img}
chromium=${FWLAB_CHROMIUM:-$(command -v chromium || command -v chromium-browser || command -v google-chrome)}
tmp=$(mktemp -d)
pid=
# cleanup stops the server (SIGTERM, then SIGKILL after 10 s) and removes tmp
cleanup() {
	if [ -n "$pid" ] && kill "$pid" 2>/dev/null; then
		for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
go build -o "$tmp/dashboard" ./cmd/dashboard
go build -o "$tmp/present" ./scripts/present
# the log exists before the server starts, so that reading it never races the
# background job's redirection
: >"$tmp/serve.log"
"$tmp/dashboard" serve -addr localhost:0 -db :memory: >"$tmp/serve.log" 2>&1 &
pid=$!
# the server prints "fwlab dashboard at http://localhost:PORT/ …" once it listens
url=
for _ in $(seq 300); do
	url=$(sed -n 's/^fwlab dashboard at \([^ ]*\) .*/\1/p' "$tmp/serve.log")
	[ -n "$url" ] && break
	kill -0 "$pid" 2>/dev/null || { cat "$tmp/serve.log"; exit 1; }
	sleep 0.1
done
[ -n "$url" ] || { echo "the server did not start:"; cat "$tmp/serve.log"; exit 1; }
mkdir -p "$dir"

# post PATH JSON: posts JSON to the API and prints the new id
post() {
	answer=$(curl -sS -X POST -H 'Content-Type: application/json' -d "$2" "${url}api/$1")
	id=$(printf '%s' "$answer" | sed -n 's/^{"id":"\([a-z0-9]*\)".*/\1/p')
	[ -n "$id" ] || { echo "POST /api/$1 answered: $answer" >&2; exit 1; }
	echo "$id"
}
# wait_done PATH: polls GET /api/PATH until its status (the first in the
# answer, the run's or the sweep's own) is done; 5 minutes at most
wait_done() {
	status=
	for _ in $(seq 1500); do
		status=$(curl -sS "${url}api/$1" | grep -o '"status":"[a-z]*"' | head -n 1 | cut -d '"' -f 4)
		case $status in
		done) return 0 ;;
		failed | cancelled | interrupted) break ;;
		esac
		sleep 0.2
	done
	echo "/api/$1 is $status, not done" >&2
	exit 1
}
# shot NAME PATH WIDTH HEIGHT [MS]: a picture of the page at PATH once MS
# (5000) milliseconds of virtual time have passed
shot() {
	out=$dir/$1
	"$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--user-data-dir="$tmp/profile" --window-size="$3,$4" --virtual-time-budget="${5:-5000}" \
		--run-all-compositor-stages-before-draw \
		--screenshot="$PWD/$out" "$url$2" 2>"$tmp/chromium.log" || { cat "$tmp/chromium.log"; exit 1; }
	if [ "$(wc -c <"$out")" -gt 256000 ] && command -v pngquant >/dev/null; then
		pngquant --force --skip-if-larger --output "$out" -- "$out" || true
	fi
	echo "$out: $(wc -c <"$out") bytes of /$2 at $3×$4"
}

lasso='"problem": "lasso", "params": {"n": 200, "p": 50, "lambda": 2}, "seed": 0, "iters": 2000, "gap": 1e-6, "eval_every": 10'
run=$(post runs "{$lasso, \"replications\": 3,
	\"algorithms\": [{\"algo\": \"ssfw-as\", \"schedule\": \"paper\", \"rho\": 0.1, \"alpha\": 0.5}, {\"algo\": \"fista\"}]}")
other=$(post runs "{$lasso, \"replications\": 3,
	\"algorithms\": [{\"algo\": \"ssfw-as\", \"schedule\": \"paper\", \"rho\": 0.3, \"alpha\": 0.5}, {\"algo\": \"afw\"}]}")
# the spec of the preset "Away steps vs zig-zag" (teach-zigzag)
teach=$(post runs '{"problem": "toy-polygon", "params": {"target": "edge"},
	"algorithms": [{"algo": "afw"}, {"algo": "fw"}], "iters": 300, "eval_every": 1}')
sweep=$(post sweeps '{"name": "ρ and the step rule on LASSO",
	"base": {"problem": "lasso", "params": {"n": 100, "p": 20, "lambda": 2},
		"algorithms": [{"algo": "ssfw-as"}], "replications": 2, "seed": 1, "iters": 1000, "gap": 1e-3, "eval_every": 10},
	"axes": [{"param": "algorithms[0].rho", "values": [0.05, 0.2]},
		{"param": "algorithms[0].stepsize", "values": ["curvature", "backtrack"]}]}')
for id in "$run" "$other" "$teach"; do wait_done "runs/$id"; done
wait_done "sweeps/$sweep"

shot dashboard.png "" 1400 1000
for size in 1400x1000 1024x768; do
	w=${size%x*} h=${size#*x}
	shot "start-$size.png" "" "$w" "$h"
	shot "run-$size.png" "runs/$run" "$w" "$h" 15000
	shot "history-$size.png" "runs" "$w" "$h"
	shot "compare-$size.png" "compare?runs=$run,$other" "$w" "$h"
	shot "sweep-$size.png" "sweeps/$sweep" "$w" "$h"
	shot "teaching-$size.png" "runs/$teach" "$w" "$h" 15000
	"$tmp/present" -chromium "$chromium" -url "${url}runs/$teach" -size "$size" -out "$dir/present-$size.png"
	echo "$dir/present-$size.png: $(wc -c <"$dir/present-$size.png") bytes of /runs/$teach presenting at $w×$h"
done
