/* The interactive report: τ sliders, the global chart, regions and a factual's counterfactuals, drawn from the data
   block with FlexMath (flex.js). Every text from the data reaches the page through textContent or, in a chart,
   with <, > and & written as entities (Plotly reads its own tags in text): never as HTML. */
"use strict";

(function () {
  var DATA = JSON.parse(document.getElementById("flex-data").textContent);
  var F = DATA.features, NF = F.length, ROWS = FlexMath.prepare(DATA);
  var COLOURS = { flex: "#2563eb", dice: "#94a3b8", mu: "#dc2626", fixed: "#cbd5e1" };
  var QUADRANT = { A: ["#dc2626", "important here only"], B: ["#64748b", "minor here and overall"],
                   C: ["#2563eb", "important everywhere"], D: ["#d97706", "important overall, less so here"] };
  var FONT = { family: "Inter, Segoe UI, Helvetica, Arial, sans-serif", size: 13 };
  var CONFIG = { displaylogo: false, responsive: true };
  var RARE = 0.05, TOP = 3;
  var state = { tau: DATA.tau.global, own: Object.assign({}, DATA.tau.features), region: DATA.regions.length ? 0 : -1,
                row: null, global: null };

  // -- text helpers ---------------------------------------------------------------------------------------
  function $(id) { return document.getElementById(id); }
  function el(tag, text, cls) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (cls) node.className = cls;
    return node;
  }
  function chartText(s) { return String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;"); }
  function fixed(v, d) { return v === null || isNaN(v) ? "–" : v.toFixed(d); }
  // a q-value as the share of flukes among regions this strong: "0.13%", "below 0.01%" (never "0.0000")
  function flukes(q) { return q === null || isNaN(q) ? "n/a" : q < 1e-4 ? "below 0.01%" : Number((100 * q).toPrecision(2)) + "%"; }
  function pct(v) { return v === null || isNaN(v) ? "n/a" : Math.round(100 * v) + "%"; }
  function number(v, integer) {
    if (v === null || isNaN(v)) return "n/a";
    if (integer || v === Math.round(v) || Math.abs(v) >= 1000) return Math.round(v).toLocaleString("en-US");
    var decimals = Math.max(0, 3 - Math.floor(Math.log10(Math.abs(v))));
    return v.toLocaleString("en-US", { maximumFractionDigits: decimals });
  }
  function join(items) {
    return items.length <= 1 ? items.join("") : items.slice(0, -1).join(", ") + " and " + items[items.length - 1];
  }
  function plural(n, word) { return n.toLocaleString("en-US") + " " + word + (n === 1 ? "" : "s"); }
  function cell(tag, text, value) {
    var node = el(tag, text);
    if (value !== undefined) node.setAttribute("data-value", String(value));
    return node;
  }
  function table(header, lines) {
    var t = el("table"), head = el("tr");
    header.forEach(function (h) { head.appendChild(el("th", h)); });
    t.appendChild(head);
    lines.forEach(function (line) {
      var tr = el("tr");
      line.forEach(function (c) { tr.appendChild(c instanceof Node ? c : el("td", c)); });
      t.appendChild(tr);
    });
    return t;
  }
  function fill(id, node) { var box = $(id); box.replaceChildren(); if (node) box.appendChild(node); }
  function paragraphs(id, texts) {
    var box = $(id);
    box.replaceChildren();
    texts.filter(Boolean).forEach(function (t) { box.appendChild(el("p", t)); });
  }
  function label(j) { return F[j].label + (F[j].immutable ? " (fixed)" : ""); }

  // -- τ ----------------------------------------------------------------------------------------------------
  function tau() { return FlexMath.tauVector(F, state.tau, state.own); }
  function tauWords() {
    var values = tau().filter(function (v) { return !isNaN(v); });
    if (!values.length) return "τ has no effect (no continuous feature)";
    var low = Math.min.apply(null, values), high = Math.max.apply(null, values);
    return "τ = " + (low === high ? low : low + " to " + high);
  }
  function slider(name, value, onInput) {
    var input = document.createElement("input");
    input.type = "range"; input.min = "0"; input.max = "1"; input.step = "0.01"; input.value = String(value);
    input.setAttribute("data-feature", name);
    input.addEventListener("input", function () { onInput(Math.round(parseFloat(input.value) * 100) / 100); });
    return input;
  }
  function buildTauControls() {
    var box = $("tau-controls"), continuous = F.filter(function (f) { return f.continuous; });
    if (!continuous.length) { box.appendChild(el("p", "This data set has no continuous feature, so τ changes nothing.")); return; }
    var row = el("div", null, "slider");
    row.appendChild(el("label", "Global τ (all continuous features)"));
    row.appendChild(slider("*", state.tau, function (v) {
      state.tau = v;
      redraw();
    }));
    row.appendChild(el("output", null)).id = "tau-global-value";
    box.appendChild(row);
    var details = el("details"), list = el("div");
    details.appendChild(el("summary", "Per-feature τ"));
    continuous.forEach(function (f) {
      var line = el("div", null, "slider");
      line.appendChild(el("label", f.label));
      line.appendChild(slider(f.name, state.tau, function (v) {
        if (v === state.tau) delete state.own[f.name]; else state.own[f.name] = v;
        redraw();
      }));
      line.appendChild(el("output", null));
      list.appendChild(line);
    });
    var reset = el("button", "Use the global τ for every feature");
    reset.id = "tau-reset";
    reset.addEventListener("click", function () { state.own = {}; redraw(); });
    details.appendChild(list);
    details.appendChild(reset);
    box.appendChild(details);
  }
  function syncSliders() {
    var t = tau();
    document.querySelectorAll("#tau-controls input[type=range]").forEach(function (input) {
      var name = input.getAttribute("data-feature");
      var value = name === "*" ? state.tau : t[F.findIndex(function (f) { return f.name === name; })];
      input.value = String(value);
      input.nextSibling.textContent = String(value);
    });
  }

  // -- charts -----------------------------------------------------------------------------------------------
  function order(result) {
    var idx = F.map(function (f, j) { return j; });
    return idx.sort(function (a, b) {
      var fa = isNaN(result.frequency[a]) ? -1 : result.frequency[a], fb = isNaN(result.frequency[b]) ? -1 : result.frequency[b];
      return fb - fa || (F[a].name < F[b].name ? -1 : F[a].name > F[b].name ? 1 : 0);
    });
  }
  function style(title, height) {
    return { title: { text: title, x: 0, xanchor: "left", font: { size: 16 } }, height: height, font: FONT,
             margin: { b: 95, l: 10, r: 30, t: 70 }, paper_bgcolor: "white", plot_bgcolor: "white",
             // Below the axis titles, in "container" coordinates, so it clears them at any height (as the app's charts).
             legend: { orientation: "h", x: 0, xanchor: "left", y: 0.01, yanchor: "bottom", yref: "container" } };
  }
  function importanceChart(id, result, title) {
    var o = order(result), labels = o.map(function (j) { return chartText(label(j)); });
    var freq = o.map(function (j) { return result.frequency[j]; });
    var traces = [{
      type: "bar", orientation: "h", name: "change frequency (FLEX)", x: freq, y: labels,
      marker: { color: o.map(function (j) { return F[j].immutable ? COLOURS.fixed : COLOURS.flex; }) },
      error_x: { type: "data", symmetric: false, color: "#334155", thickness: 1.2,
                 array: o.map(function (j) { return result.ci[j][1] - result.frequency[j]; }),
                 arrayminus: o.map(function (j) { return result.frequency[j] - result.ci[j][0]; }) },
      hovertemplate: "%{y}<br>F = %{x:.3f}<extra></extra>"
    }];
    var cont = o.filter(function (j) { return F[j].continuous; });
    if (cont.length) {
      traces.push({ type: "scatter", mode: "markers", name: "mean change size (share of range)", cliponaxis: false,
                    x: cont.map(function (j) { return result.magnitude[j]; }),
                    y: cont.map(function (j) { return chartText(label(j)); }),
                    marker: { color: COLOURS.mu, size: 11, symbol: "diamond", line: { color: "white", width: 1 } },
                    hovertemplate: "%{y}<br>μ = %{x:.3f}<extra></extra>" });
    }
    traces.push({ type: "bar", orientation: "h", name: "DiCE frequency", xaxis: "x2", yaxis: "y",
                  x: o.map(function (j) { return result.dice[j]; }), y: labels, marker: { color: COLOURS.dice },
                  hovertemplate: "%{y}<br>DiCE = %{x:.3f}<extra></extra>" });
    var layout = style(chartText(title), Math.max(300, 170 + 34 * NF));
    layout.xaxis = { domain: [0, 0.595], range: [0, 1.05], title: { text: "FLEX change frequency (95% interval): share of ways out changing it" } };
    layout.xaxis2 = { domain: [0.635, 1], range: [0, 1.05], anchor: "y", title: { text: "DiCE (Algorithm 2): any change counts" } };
    layout.yaxis = { autorange: "reversed", automargin: true };
    return Plotly.react(id, traces, layout, CONFIG);
  }
  function scatterChart(id, reg) {
    var keep = F.map(function (f, j) { return j; }).filter(function (j) { return reg.quadrants[j] !== null; });
    var x = keep.map(function (j) { return reg.global[j]; }), y = keep.map(function (j) { return reg.importance.frequency[j]; });
    var finite = x.concat(y).filter(function (v) { return !isNaN(v); });
    var top = Math.min(1.05, Math.max.apply(null, finite.concat([0.1])) * 1.15 + 0.03), pad = 0.06 * top;
    var shown = FlexMath.thinLabels(x, y, 0.2 * top, 0.06 * top);
    var quads = keep.map(function (j) { return reg.quadrants[j]; });
    var traces = [{
      type: "scatter", mode: "markers+text", name: "features", showlegend: false, cliponaxis: false, textposition: "top center",
      x: x, y: y, text: keep.map(function (j, k) { return shown[k] ? chartText(F[j].label) : ""; }),
      hovertext: keep.map(function (j, k) { return chartText(F[j].label) + " (" + quads[k] + ": " + QUADRANT[quads[k]][1] + ")"; }),
      hovertemplate: "%{hovertext}<br>global F = %{x:.3f}<br>regional F = %{y:.3f}<extra></extra>",
      marker: { size: 13, color: quads.map(function (q) { return QUADRANT[q][0]; }), line: { color: "white", width: 1 } }
    }, { type: "scatter", mode: "lines", name: "y = x (same importance as globally)", hoverinfo: "skip",
         x: [0, top], y: [0, top], line: { color: "#94a3b8", dash: "dash" } }];
    Object.keys(QUADRANT).filter(function (q) { return quads.indexOf(q) >= 0; }).forEach(function (q) {
      traces.push({ type: "scatter", mode: "markers", name: q + ": " + QUADRANT[q][1], hoverinfo: "skip", x: [null], y: [null],
                    marker: { color: QUADRANT[q][0], size: 11 } });
    });
    var layout = style("Regional vs global importance", 540);
    layout.margin.b = 135;
    layout.xaxis = { range: [-pad, top + pad], title: { text: "global importance (all cases)" } };
    layout.yaxis = { range: [-pad, top + pad], title: { text: "regional importance (this region)" } };
    var g = reg.thresholds[0], r = reg.thresholds[1];
    if (!isNaN(g) && !isNaN(r)) {
      var line = { color: "#cbd5e1", dash: "dot" };
      layout.shapes = [{ type: "line", x0: g, x1: g, xref: "x", y0: 0, y1: 1, yref: "y domain", line: line },
                       { type: "line", y0: r, y1: r, yref: "y", x0: 0, x1: 1, xref: "x domain", line: line }];
    }
    return Plotly.react(id, traces, layout, CONFIG);
  }

  // -- readings (as the app's ui.reporting words them, shortened) -----------------------------------------
  function lists(result) {
    var mutable = F.map(function (f, j) { return j; }).filter(function (j) { return !F[j].immutable && !isNaN(result.frequency[j]); });
    mutable.sort(function (a, b) { return result.frequency[b] - result.frequency[a] || (F[a].name < F[b].name ? -1 : 1); });
    return { often: mutable.filter(function (j) { return result.frequency[j] >= RARE; }).slice(0, TOP),
             rarely: mutable.filter(function (j) { return result.frequency[j] < RARE; }),
             fixed: F.map(function (f, j) { return j; }).filter(function (j) { return F[j].immutable; }) };
  }
  function describe(result, scope) {
    var l = lists(result), outcome = DATA.undesirable.join(" / ");
    if (!result.n) return ["No way out was found, so there is nothing to read."];
    var lead = scope + " " + plural(result.n, "case") + " predicted " + outcome + ", ";
    lead += l.often.length ? "the smallest changes that flip the prediction most often involve " +
      join(l.often.map(function (j) { return F[j].label + " (" + pct(result.frequency[j]) + " of ways out)"; })) + "."
      : "no changeable feature is changed by " + pct(RARE) + " or more of the ways out.";
    var tail = [];
    if (l.rarely.length) tail.push("Rarely changed (under " + pct(RARE) + " of ways out): " + join(l.rarely.map(function (j) { return F[j].label; })) + ".");
    if (l.fixed.length) tail.push("Held fixed because they cannot be changed: " + join(l.fixed.map(function (j) { return F[j].label; })) + ".");
    if (F.some(function (f) { return f.continuous; })) tail.push("A change to a number counts only when it exceeds " + tauWords() + " of the number's range.");
    return [lead, tail.join(" ")];
  }
  function describeRegion(region, reg) {
    var text = describe(reg.importance, "In this group of");
    var r = reg.r, agreement;
    if (isNaN(r)) agreement = "The region is too small or too uniform to compare with the whole population (agreement undefined).";
    else {
      agreement = "Its pattern " + (r >= 0.7 ? "closely follows" : r >= 0.3 ? "partly follows" : "differs from") +
        " the whole population's (agreement " + r.toFixed(2) + " on a scale from \u22121 to 1).";
      var lo = reg.interval[0], hi = reg.interval[1], n = reg.importance.n;
      if (isNaN(lo)) agreement += " With " + plural(n, "case") + " with ways out, the agreement has no honest interval: read it as a guess.";
      else {
        agreement += " From " + n + " cases, the agreement's 95% interval runs from " + lo.toFixed(2) + " to " + hi.toFixed(2);
        agreement += lo <= -0.99 && hi >= 0.99 ? ": so few cases cannot pin the agreement down at all." : hi - lo > 0.5 ? "; with so wide a range, read it as rough." : ".";
      }
    }
    var rarely = lists(reg.importance).rarely, by = {};
    reg.quadrants.forEach(function (q, j) {
      if (q !== null && !((q === "A" || q === "C") && rarely.indexOf(j) >= 0)) (by[q] = by[q] || []).push(F[j].label);
    });
    var extra = [];
    if (by.A) extra.push("Important here only (A on the chart): " + join(by.A) + ".");
    if (by.C) extra.push("Important everywhere (C on the chart): " + join(by.C) + ".");
    if (by.D) extra.push("Important overall, less so here (D on the chart): " + join(by.D) + ".");
    var shifts = region.mode_shift.filter(function (s) { return s.delta !== null; }).sort(function (a, b) { return a.delta - b.delta; });
    if (shifts.length && shifts[0].delta < -0.3) {
      var s = shifts[0], name = (F.find(function (f) { return f.name === s.name; }) || { label: s.name }).label;
      extra.push("The ways out most often move away from " + name + " = " + s.mode + " (its share falls from " + pct(s.p_orig) + " of the cases to " + pct(s.p_cf) + " of their ways out).");
    }
    return ["This region is " + region.description + ". " + text[0], [text[1], agreement].concat(extra).join(" ")];
  }

  // -- tables -----------------------------------------------------------------------------------------------
  function importanceTable(result) {
    return table(["feature", "change frequency", "95% interval", "mean change size (numbers)", "DiCE frequency"], order(result).map(function (j) {
      return [el("td", label(j)), cell("td", fixed(result.frequency[j], 3), result.frequency[j]),
              el("td", fixed(result.ci[j][0], 2) + " to " + fixed(result.ci[j][1], 2)),
              cell("td", fixed(result.magnitude[j], 3), result.magnitude[j]), cell("td", fixed(result.dice[j], 3), result.dice[j])];
    }));
  }
  function modeShiftTable(region) {
    return table(["feature", "region's most common", "share of cases", "share of ways out", "relative change", "most common in the ways out"],
      region.mode_shift.map(function (s) {
        var f = F.find(function (g) { return g.name === s.name; });
        return [el("td", f ? f.label : s.name), el("td", s.mode), el("td", pct(s.p_orig)), el("td", pct(s.p_cf)),
                cell("td", s.delta === null ? "–" : (s.delta > 0 ? "+" : s.delta < 0 ? "\u2212" : "") + Math.abs(Math.round(100 * s.delta)) + "%", s.delta), el("td", s.cf_mode === null ? "–" : s.cf_mode)];
      }));
  }

  // -- factuals and their counterfactuals ----------------------------------------------------------------
  function shown(j, code) {
    if (code === null || isNaN(code)) return "–";
    if (F[j].continuous) return number(code, F[j].integer);
    return (F[j].words || F[j].levels)[code];  // the dictionary's words, as the app shows them
  }
  function matches(query) {
    var text = query.trim().toLowerCase(), out = [];
    for (var i = 0; i < ROWS.length && out.length < 200; i++) {
      if (!text) { out.push(i); continue; }
      if (/^\d+$/.test(text)) { if (String(ROWS[i].id) === text) out.push(i); continue; }
      var x = DATA.rows.x[i];
      for (var j = 0; j < NF; j++) {
        if ((F[j].label + "=" + shown(j, x[j])).toLowerCase().indexOf(text) >= 0 || shown(j, x[j]).toLowerCase().indexOf(text) >= 0) { out.push(i); break; }
      }
    }
    return out;
  }
  function searchRows() {
    var list = $("row-list"), found = matches($("row-search").value);
    list.replaceChildren();
    found.forEach(function (i) {
      var option = el("option", "row " + ROWS[i].id + " (" + plural(ROWS[i].count, "valid way") + " out" + ")");
      option.value = String(i);
      list.appendChild(option);
    });
    $("row-count").textContent = found.length >= 200 ? "the first 200 matches" : plural(found.length, "match");
    if (found.length && found.indexOf(state.row) < 0) { state.row = found[0]; }
    if (state.row !== null) list.value = String(state.row);
    drawRow();
  }
  function caseColumns(x, cfs) {
    /* The features in reading order, as the app's case tables (ui.reporting.changed_first): those some way out
       changes first, the most often changed first (ties in the dictionary's order), then the others. */
    var counts = F.map(function (f, j) {
      return cfs.filter(function (cf) {
        return cf !== null && (f.continuous ? Math.abs(cf[j] - x[j]) > DATA.epsilon : cf[j] !== x[j]);
      }).length;
    });
    var order = F.map(function (f, j) { return j; });
    var moved = order.filter(function (j) { return counts[j] > 0; });
    moved.sort(function (a, b) { return counts[b] - counts[a] || a - b; });
    return {moved: moved, still: order.filter(function (j) { return counts[j] === 0; })};
  }
  function drawRow() {
    var i = state.row;
    if (i === null) { fill("row-table", el("p", "No case matches.")); return; }
    var t = tau(), x = DATA.rows.x[i], cfs = DATA.rows.cf[i], p = DATA.rows.p[i], valid = DATA.rows.valid[i];
    var cols = caseColumns(x, cfs);
    function heads(js) { return js.map(function (j) { return (F[j].header || F[j].label) + (F[j].immutable ? " (fixed)" : ""); }); }
    function line(first, cells, outcome) {  // a line's cells in the columns' order: what changes, the outcome, the rest
      return [first].concat(cols.moved.map(function (j) { return cells[j]; }), outcome, cols.still.map(function (j) { return cells[j]; }));
    }
    var probability = "P(" + DATA.undesirable.join(" / ") + ")";
    var header = [""].concat(heads(cols.moved), [probability, "valid"], heads(cols.still));
    var lines = [line(el("td", "this case (row " + ROWS[i].id + ")"), F.map(function (f, j) { return el("td", shown(j, x[j])); }),
                      [cell("td", fixed(p[0], 3), p[0]), el("td", "")])];
    cfs.forEach(function (cf, k) {
      if (cf === null) return;
      var cells = F.map(function (f, j) {
        var c = el("td", shown(j, cf[j])), delta = Math.abs(cf[j] - x[j]);
        if (f.continuous && delta / (f.range > 0 ? f.range : Infinity) > t[j]) c.className = "changed";
        else if (f.continuous && delta > DATA.epsilon) c.className = "moved";
        else if (!f.continuous && delta !== 0) c.className = "changed";
        return c;
      });
      lines.push(line(el("td", "way out " + lines.length), cells,
                      [cell("td", fixed(p[k + 1], 3), p[k + 1]), el("td", valid.charAt(k) === "1" ? "yes" : "no")]));
    });
    var local = FlexMath.localFrequencies(F, ROWS[i], t);
    lines.push(line(el("td", "share of its valid ways out that change it"), F.map(function (f, j) {
      return local === null ? el("td", "–") : cell("td", fixed(local[j], 2), local[j]);
    }), [el("td", ""), el("td", "")]));
    var built = table(header, lines);
    built.id = "row-cf-table";
    fill("row-table", built);
    var said = $("row-table");  // what the generator said of this case, as the app's Counterfactuals page says it
    if ((DATA.rows.more || "").charAt(i) === "1") {
      said.insertBefore(el("p", "This case has more smallest ways out than the " + cfs.length + " asked for: those that " +
                               "change the fewest features, with the smallest changes, are shown.", "said"), built);
    }
    if ((DATA.rows.searched || "").charAt(i) === "1") {
      said.insertBefore(el("p", "No change to only " + (DATA.rows.read || "one or two features") + " flips this case, so these ways out come from a " +
                               "random search that changes more features, each made as small as the search could (not " +
                               "read exactly from the trees).", "said"), built);
    }
  }

  // -- drawing ------------------------------------------------------------------------------------------------
  function drawRegion() {
    if (state.region < 0) return Promise.resolve();
    var region = DATA.regions[state.region];
    var reg = FlexMath.regional(DATA, ROWS, region.members, tau(), state.global);
    var r = $("region-r");
    r.textContent = isNaN(reg.r) ? "Agreement with all cases: undefined" : "Agreement with all cases (Pearson r) = " + reg.r.toFixed(3) +
      (isNaN(reg.interval[0]) ? " (no interval)" : " (95% interval " + reg.interval[0].toFixed(3) + " to " + reg.interval[1].toFixed(3) + ")");
    r.setAttribute("data-value", String(reg.r));
    r.setAttribute("data-low", String(reg.interval[0]));
    r.setAttribute("data-high", String(reg.interval[1]));
    paragraphs("region-reading", describeRegion(region, reg));
    fill("region-table", importanceTable(reg.importance));
    fill("region-modes", modeShiftTable(region));
    var d = region.discovery;
    $("region-discovery").textContent = d ? "Found by region discovery at τ " + DATA.discovery_tau + " (share of flukes among regions this strong " + flukes(d.q_value) +
      (d.significant ? ": it differs significantly" : d.interval_reaches_zero ? ", below the false-discovery rate, but how much it differs " +
       "could be 0 within its 95% interval: not called significant" : ": it does not differ significantly") +
      "); moving τ recomputes its change frequencies but does not search again." : "";
    return Promise.all([importanceChart("region-chart", reg.importance, "Importance in this region (" + plural(reg.importance.n, "case") + ")"),
                        scatterChart("region-scatter", reg)]);
  }
  var pending = null;
  function redraw() {
    var started = performance.now();
    syncSliders();
    state.global = FlexMath.importance(DATA, ROWS, DATA.global, tau());
    $("tau-now").textContent = tauWords();
    paragraphs("global-reading", describe(state.global, "Across"));
    fill("global-table", importanceTable(state.global));
    drawRow();
    pending = Promise.all([importanceChart("global-chart", state.global, "Global feature importance from " + plural(state.global.n, "case")),
                           drawRegion()]).then(function () { window.flexReport.lastRedrawMs = performance.now() - started; });
    return pending;
  }

  // -- the parts that do not change with τ -------------------------------------------------------------------
  function header() {
    document.title = DATA.title;
    $("title").textContent = DATA.title;
    $("built").textContent = "A snapshot built " + DATA.built + " from the data with fingerprint " + DATA.fingerprint +
      ". Its numbers come from the counterfactuals generated then; this file recomputes FLEX from them at any τ, " +
      "needs no network and no server, and changes nothing when the data or model change.";
    fill("settings", table(["setting", "value"], DATA.settings.map(function (s) { return [el("td", s[0]), el("td", s[1])]; })));
    var q = DATA.quality, keys = q.columns;
    fill("quality", table(keys, q.lines.map(function (line) {
      return keys.map(function (k, n) { return n === 0 ? el("td", line[k]) : el("td", line[k] === null ? "–" : fixed(line[k], 3)); });
    })));
    if (q.note) $("quality").appendChild(el("p", q.note));
    if (q.curves) $("quality").appendChild(el("p", q.curves));
    var notes = $("notes");
    DATA.notes.forEach(function (n) { notes.appendChild(el("li", n)); });
    if (!DATA.notes.length) notes.appendChild(el("li", "No notes."));
  }
  function regionsList() {
    var list = $("region-list");
    if (!DATA.regions.length) { $("regions").appendChild(el("p", "No region was saved or discovered when this file was built.")); list.hidden = true; return; }
    DATA.regions.forEach(function (region, n) {
      var option = el("option", region.name + " (" + plural(region.members.length, "case") + ")");
      option.value = String(n);
      list.appendChild(option);
    });
    list.addEventListener("change", function () { state.region = parseInt(list.value, 10); drawRegion(); });
  }

  header();
  buildTauControls();
  regionsList();
  $("row-search").addEventListener("input", searchRows);
  $("row-list").addEventListener("change", function () { state.row = parseInt($("row-list").value, 10); drawRow(); });
  window.flexReport = {
    data: DATA,
    state: state,
    setTau: function (global, own) { state.tau = global; state.own = Object.assign({}, own || {}); return redraw(); },
    lastRedrawMs: null,
    ready: null
  };
  state.row = null;
  redraw();
  searchRows();
  window.flexReport.ready = pending.then(function () { document.body.setAttribute("data-ready", "1"); return performance.now(); });
})();
