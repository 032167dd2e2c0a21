#!/bin/sh
# Fails when a committed *_templ.go file differs from what templ generates
# from its .templ source: regenerate into a scratch copy and compare.
set -eu
[ -d web/templates ] || exit 0
ls web/templates/*.templ >/dev/null 2>&1 || exit 0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r web/templates "$tmp/templates"
go tool templ generate -path "$tmp/templates" >/dev/null 2>&1 || { echo "templ generate failed"; exit 1; }
status=0
for f in "$tmp"/templates/*_templ.go; do
	name=$(basename "$f")
	if ! cmp -s "$f" "web/templates/$name"; then
		echo "web/templates/$name is out of date: run 'make generate' and commit the result"
		status=1
	fi
done
exit $status
