#!/bin/sh
# Refresh the vendored front-end files under web/static/vendor/ from the npm
# packages pinned in web/package.json and web/package-lock.json. The copies are
# committed so that `go build` needs no npm; run this after changing a version.
set -eu
cd "$(dirname "$0")"
npm ci --no-audit --no-fund
src=node_modules/uplot
want=$(node -p 'require("./package.json").dependencies.uplot')
got=$(node -p 'require("./node_modules/uplot/package.json").version')
if [ "$want" != "$got" ]; then
	echo "vendor.sh: uplot $got installed, package.json pins $want" >&2
	exit 1
fi
mkdir -p static/vendor
cp "$src/dist/uPlot.iife.min.js" static/vendor/uPlot.iife.min.js
cp "$src/dist/uPlot.min.css" static/vendor/uPlot.min.css
cp "$src/LICENSE" static/vendor/uPlot.LICENSE
printf 'uplot %s\n' "$got" > static/vendor/VERSIONS
echo "vendor.sh: uplot $got copied to web/static/vendor/"
