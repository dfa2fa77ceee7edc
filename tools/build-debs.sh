#!/usr/bin/env bash
# Build the Debian packages from a clean copy of the source tree (make deb).
#
#   tools/build-debs.sh OUTDIR
#
# Copies the tree's files (tracked and new, not ignored: no build/) to
# OUTDIR/src, runs 'dpkg-buildpackage -b' there (debhelper, dh-dkms;
# debian/rules), then lintian on the result.  The .deb files land in OUTDIR;
# lintian's report in OUTDIR/lintian.txt.  Fails on a lintian error.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:?usage: build-debs.sh OUTDIR}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
rm -rf "$OUT/src" "$OUT"/*.deb "$OUT"/*.changes "$OUT"/*.buildinfo
mkdir -p "$OUT/src"
if git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1; then
	git -C "$ROOT" ls-files -z --cached --others --exclude-standard |
		(cd "$ROOT" && xargs -0 -r sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh) |
		tar -C "$ROOT" --null -T - -cf - | tar -C "$OUT/src" -xf -
else
	tar -C "$ROOT" --exclude=./build -cf - . | tar -C "$OUT/src" -xf -
fi
echo "build-debs: dpkg-buildpackage -b in $OUT/src (log: $OUT/build.log)"
if ! (cd "$OUT/src" && DEB_BUILD_OPTIONS="parallel=$(nproc) ${DEB_BUILD_OPTIONS:-}" \
	dpkg-buildpackage -b -us -uc) >"$OUT/build.log" 2>&1; then
	tail -n 30 "$OUT/build.log" >&2
	echo "build-debs: dpkg-buildpackage failed (log: $OUT/build.log)" >&2
	exit 1
fi
changes=$(ls "$OUT"/*.changes)
lintian --info --display-info "$changes" >"$OUT/lintian.txt" 2>&1 || true
for deb in "$OUT"/*.deb; do
	printf 'build-debs: %-48s %8s bytes\n' "$(basename "$deb")" "$(stat -c %s "$deb")"
done
summary=$(sed -n 's/^\([EWIPX]\): .*/\1/p' "$OUT/lintian.txt" | sort | uniq -c | tr '\n' ' ')
echo "build-debs: lintian: ${summary:-no tags} (E error, W warning, I info; $OUT/lintian.txt)"
if grep -q '^E: ' "$OUT/lintian.txt"; then
	grep '^E: ' "$OUT/lintian.txt" >&2
	exit 1
fi
