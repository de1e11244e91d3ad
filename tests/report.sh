#!/bin/sh
# report.sh -- the visual report (-f html, -f svg --plot), tested as a
# person sees it: Chromium renders the page headless; a probe script,
# appended to a copy of the page, reads the DOM and the laid-out boxes and
# writes what it found into the page, which Chromium dumps.  Checked: one
# series per strategy in each scaling plot, one bar row per computed
# strategy, the recommendation highlighted in the table, the scaling plots
# and the bars; no two tick labels of an axis overlap, no legend entries
# overlap, no text outside its chart; a screenshot is written.  Also, with
# no browser needed: two runs are byte-identical, the page loads nothing
# (no src, href or url()), -f svg writes one chart, bad --plot uses are
# usage errors.  Skipped (the browser part) without Chromium: `./bootstrap
# --tests` installs it.  TAP.
: "${STACKGEN:=./tests/stackgen}"
. "${srcdir:=.}/tests/tap.sh"
tap_begin report STACKGEN

model=$srcdir/examples/resnet50.onnx
chromium=$(command -v chromium || command -v chromium-browser || true)

# The probe: what the checks read, as "key value" lines in <pre id=probe>.
cat >"$tmp/probe.js" <<'EOF'
(function () {
  var out = [];
  function put(k, v) { out.push(k + " " + v); }
  function overlap(a, b) {
    return a.left < b.right - 0.5 && b.left < a.right - 0.5 &&
           a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
  }
  /* pairs of overlapping boxes among the elements of one group */
  function clashes(els) {
    var n = 0, r = els.map(function (e) { return e.getBoundingClientRect(); });
    for (var i = 0; i < r.length; i++)
      for (var j = i + 1; j < r.length; j++)
        if (overlap(r[i], r[j])) n++;
    return n;
  }
  var svgs = document.querySelectorAll("svg");
  put("charts", svgs.length);
  var sc = document.getElementById("scaling");
  put("series", sc.querySelectorAll(".series").length);
  put("recommended_points", sc.querySelectorAll(".recommended").length);
  put("infeasible_points", sc.querySelectorAll(".infeasible").length);
  put("bar_rows", document.querySelectorAll("#breakdown .row").length);
  put("memory_rows", document.querySelectorAll("#memory .row").length);
  put("recommended_bars", document.querySelectorAll("#breakdown .row.recommended").length);
  put("recommended_table_rows", document.querySelectorAll("table.ranking tr.recommended").length);
  put("recommended_part_rows", document.querySelectorAll("table.parts tr.recommended").length);
  put("first_row_recommended",
      document.querySelector("table.ranking tr:nth-child(2)").className == "recommended" ? 1 : 0);
  put("capacity_lines", document.querySelectorAll("#memory .capacity").length);
  put("layer_bars", document.querySelectorAll("#layers .layer-bar").length);
  var tick = 0, outside = 0, legend = 0;
  svgs.forEach(function (s) {
    var box = s.getBoundingClientRect(), groups = {};
    s.querySelectorAll(".tick").forEach(function (t) {
      /* the ticks of one axis share a y (x axis) or an x (y axis) */
      var k = t.classList.contains("x") ? "x" + t.getAttribute("y") : "y" + t.getAttribute("x");
      (groups[k] = groups[k] || []).push(t);
    });
    Object.keys(groups).forEach(function (k) { tick += clashes(groups[k]); });
    legend += clashes(Array.prototype.slice.call(s.querySelectorAll(".legend-entry")));
    s.querySelectorAll("text").forEach(function (t) {
      var r = t.getBoundingClientRect();
      if (r.left < box.left - 0.5 || r.right > box.right + 0.5 ||
          r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5)
        outside++;
    });
  });
  put("tick_overlaps", tick);
  put("legend_overlaps", legend);
  put("text_outside", outside);
  var pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = out.join("\n");
  document.body.appendChild(pre);
})();
EOF

# render PAGE: the probe's lines of PAGE into $tmp/probe.txt
render()
{
	sed 's#</body>#<script src="probe.js"></script></body>#' "$1" >"$tmp/probed.html"
	timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --virtual-time-budget=5000 \
		--dump-dom "file://$tmp/probed.html" 2>/dev/null |
		sed -n '/<pre id="probe">/,/<\/pre>/p' | sed 's/<[^>]*>//g' >"$tmp/probe.txt"
}

probe()
{
	sed -n "s/^$1 //p" "$tmp/probe.txt"
}

# want KEY VALUE: the probe's KEY is VALUE
want()
{
	got=$(probe "$1")
	[ "$got" = "$2" ] || fail "$1: $got, expected $2"
}

"$ORACLEC" "$model" -g 64 -q -f html -o "$tmp/r.html" 2>"$tmp/err"
status_why $? 0
mv "$tmp/r.html" "$tmp/r1.html"
"$ORACLEC" "$model" -g 64 -q -f html -o "$tmp/r.html" 2>>"$tmp/err"
cmp -s "$tmp/r.html" "$tmp/r1.html" || fail "two runs differ"
grep -Eq '(src|href)=|url\(' "$tmp/r.html" && fail "the page loads something"
grep -q '<script' "$tmp/r.html" && fail "the page has a script"
check "-f html: one page, byte-identical twice, nothing loaded, no script"

"$ORACLEC" "$model" -g 64 -q -f svg --plot memory -o "$tmp/m.svg" 2>"$tmp/err"
status_why $? 0
[ "$(grep -c '<svg' "$tmp/m.svg")" = 1 ] || fail "not one chart"
grep -q 'id="memory"' "$tmp/m.svg" || fail "not the memory chart"
check "-f svg --plot memory: one chart"

"$ORACLEC" "$model" -q --plot memory >"$tmp/out" 2>"$tmp/err"
status_why $? 2
grep -q "draws a chart of -f svg" "$tmp/err" || fail "no message"
"$ORACLEC" "$model" -q -f svg --plot pie >"$tmp/out" 2>"$tmp/err"
status_why $? 2
grep -q "unknown plot 'pie'" "$tmp/err" || fail "no message"
"$ORACLEC" "$model" -q -f svg --grid data=4 >"$tmp/out" 2>"$tmp/err"
status_why $? 2
grep -q "needs a sweep" "$tmp/err" || fail "no message"
check "--plot without -f svg, an unknown plot, scaling with --grid: usage errors"

if [ -z "$chromium" ]; then
	echo "ok 4 # SKIP chromium is not installed (./bootstrap --tests installs it)"
	echo "ok 5 # SKIP chromium is not installed"
	echo "ok 6 # SKIP chromium is not installed"
	n=6
	finish
	exit
fi

# ResNet-50 at 64 GPUs: eleven strategies, two plots, all computed, and
# the best's per-GPU throughput over one node's (a third plot, one series)
render "$tmp/r.html"
[ -s "$tmp/probe.txt" ] || fail "the probe wrote nothing"
want charts 4
want series 23
want recommended_points 2
want bar_rows 11
want memory_rows 11
want recommended_bars 1
want recommended_table_rows 1
want recommended_part_rows 1
want first_row_recommended 1
want capacity_lines 1
want tick_overlaps 0
want legend_overlaps 0
want text_outside 0
timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --window-size=1100,3400 \
	--screenshot="$tmp/r.png" "file://$tmp/r.html" >/dev/null 2>&1
[ -s "$tmp/r.png" ] || fail "no screenshot"
check "Chromium: series, bars and the recommendation as analysed; no overlap, nothing outside"

# 65,536 GPUs: a sweep of 17 counts; at 256 samples per GPU data
# parallelism does not fit in abci's 16 GiB: its points are crossed
"$ORACLEC" "$model" -g 65536 -b 256 -q -f html -o "$tmp/big.html" 2>"$tmp/err"
status_why $? 0
render "$tmp/big.html"
want tick_overlaps 0
want text_outside 0
[ "$(probe infeasible_points)" -gt 0 ] 2>/dev/null || fail "no point marked infeasible"
check "Chromium: 17 GPU counts, infeasible points crossed, labels apart"

# 1,000 layers: the per-layer strips
"$STACKGEN" 250 "$tmp/deep.onnx" >"$tmp/out" 2>"$tmp/err"
"$ORACLEC" "$tmp/deep.onnx" -g 8 -q -f html -o "$tmp/deep.html" 2>>"$tmp/err"
status_why $? 0
render "$tmp/deep.html"
[ "$(probe layer_bars)" -ge 1000 ] 2>/dev/null || fail "layer bars: $(probe layer_bars)"
want tick_overlaps 0
want text_outside 0
check "Chromium: 1,000 layers, labels apart"

finish
