#!/usr/bin/env bash
# Opens a study report in a real browser (headless Chromium) at two window widths (1400 and 800
# px), takes a screenshot of each and fails when its charts are missing or blank, do not fill the
# page's width, or are cut at its right edge: the charts are the only coloured pixels on the page
# (text is grey), so the check counts saturated pixels in the PNG (decoded with python3's zlib,
# no PIL) and finds the rightmost column that has one.
#   scripts/check-report-browser.sh TWOCS_PROGRAM [REPORT.html]
# Without REPORT.html it writes one from a small results CSV with `twocs report`. Installs
# Debian's chromium with apt-get when it is missing (needs root).
set -euo pipefail
program="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
browser="$(command -v chromium || command -v chromium-browser || true)"
if [ -z "$browser" ]; then
  echo "check-report-browser: chromium missing; installing it with apt-get" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  browser="$(command -v chromium)"
fi
page="${2:-}"
if [ -z "$page" ]; then
  cat > "$work/r.csv" <<'CSV'
scenario,model.hidden,status,reason,iteration_time_s,breakdown_s.compute,breakdown_s.exposed_comm,breakdown_s.overlapped_comm,breakdown_s.idle,exposed_comm_by_kind_s.tensor,exposed_comm_by_kind_s.pipeline,exposed_comm_by_kind_s.data,comm_busy_s,comm_fraction,exposed_comm_fraction,mfu
0,1024,ok,,1.0,0.6,0.3,0.2,0.1,0.2,0.05,0.05,0.5,0.45,0.3,0.4
1,2048,ok,,2.0,1.5,0.3,0.4,0.2,0.1,0.1,0.1,0.7,0.31,0.15,0.5
2,4096,ok,,4.0,3.2,0.5,0.9,0.3,0.2,0.2,0.1,1.4,0.30,0.12,0.55
CSV
  "$program" report "$work/r.csv" -o "$work/r.html"
  page="$work/r.html"
fi
for width in 1400 800; do
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=$width,2400 \
  --screenshot="$work/shot.png" "file://$(realpath "$page")" >/dev/null 2>&1
python3 - "$work/shot.png" <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, width = 8, b"", 0
while pos < len(data):
    length, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + length]
    if kind == b"IHDR":
        width, height, depth, colour = struct.unpack(">IIBB", body[:10])
        assert depth == 8 and colour in (2, 6), "unexpected PNG format"
        channels = 3 if colour == 2 else 4
    elif kind == b"IDAT":
        idat += body
    pos += 12 + length
raw, stride = zlib.decompress(idat), width * channels
prev, coloured, rightmost, i = bytearray(stride), 0, 0, 0
for _ in range(height):
    f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride]); i += 1 + stride
    for x in range(stride):
        a = line[x - channels] if x >= channels else 0
        b, c = prev[x], prev[x - channels] if x >= channels else 0
        if f == 1: line[x] = (line[x] + a) & 255
        elif f == 2: line[x] = (line[x] + b) & 255
        elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    for x in range(0, stride, channels):
        r, g, bl = line[x:x + 3]
        if max(r, g, bl) - min(r, g, bl) > 60:
            coloured += 1
            rightmost = max(rightmost, x // channels)
    prev = line
print(f"check-report-browser: {coloured} coloured pixels in a {width}x{height} screenshot, "
      f"the rightmost at x = {rightmost}")
ok = coloured > 2000 and rightmost >= 0.7 * width and rightmost < width - 8
sys.exit(0 if ok else 1)
PY
done
