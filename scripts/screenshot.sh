#!/bin/sh
# Makes docs/img/dashboard.png, the README's screenshot: the dashboard's start
# page in headless Chromium (1400×1000), served from a run store in memory on
# a free loopback port once its scripts have run (5 s of virtual time); the
# server is stopped afterwards.
# Usage: scripts/screenshot.sh [OUT.png]
set -eu
cd "$(dirname "$0")/.."
out=${1:-docs/img/dashboard.png}
chromium=${FWLAB_CHROMIUM:-$(command -v chromium || command -v chromium-browser || command -v google-chrome)}
tmp=$(mktemp -d)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
go build -o "$tmp/dashboard" ./cmd/dashboard
"$tmp/dashboard" serve -addr localhost:0 -db :memory: >"$tmp/serve.log" 2>&1 &
pid=$!
# the server prints "fwlab dashboard at http://localhost:PORT/ …" once it listens
url=
for _ in $(seq 100); do
	url=$(sed -n 's/^fwlab dashboard at \([^ ]*\) .*/\1/p' "$tmp/serve.log")
	[ -n "$url" ] && break
	kill -0 "$pid" 2>/dev/null || { cat "$tmp/serve.log"; exit 1; }
	sleep 0.1
done
[ -n "$url" ] || { echo "the server did not start:"; cat "$tmp/serve.log"; exit 1; }
mkdir -p "$(dirname "$out")"
"$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars \
	--user-data-dir="$tmp/profile" --window-size=1400,1000 --virtual-time-budget=5000 \
	--screenshot="$PWD/$out" "$url" 2>"$tmp/chromium.log" || { cat "$tmp/chromium.log"; exit 1; }
echo "$out: $(wc -c <"$out") bytes of $url"
