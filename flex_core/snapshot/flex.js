/* FLEX's arithmetic in JavaScript: the same formulas as flex_core.importance (Algorithm 1, Eq. 1 and 4, Algorithm 2,
   Eq. 6) and flex_core._uncertainty (Wilson intervals with a continuity correction, r's interval), on the
   counterfactuals the report file carries. No DOM here: tests run this file in Node and in Chromium. */
"use strict";

var FlexMath = (function () {
  function num(v) { return v === null || v === undefined ? NaN : v; }

  /* Per row, what does not depend on τ: valid counterfactuals, |cf - x| / range of each continuous feature,
     changed flags of the others, μ sums and DiCE's ε-changes (flex_core.importance._flex.change_matrix). */
  function prepare(data) {
    var F = data.features, R = data.rows, nf = F.length, eps = data.epsilon;
    var safe = F.map(function (f) { return f.continuous && f.range > 0 ? f.range : Infinity; });
    var rows = [];
    for (var i = 0; i < R.id.length; i++) {
      var x = R.x[i].map(num), cfs = R.cf[i], valid = R.valid[i];
      var rel = F.map(function () { return []; });
      var hits = new Float64Array(nf), mu = new Float64Array(nf), dice = new Float64Array(nf), count = 0;
      for (var k = 0; k < cfs.length; k++) {
        if (valid.charAt(k) !== "1" || cfs[k] === null) continue;
        count++;
        for (var j = 0; j < nf; j++) {
          var delta = Math.abs(num(cfs[k][j]) - x[j]);
          if (F[j].continuous) {
            var r = delta / safe[j];
            rel[j].push(r);
            mu[j] += r;  // NaN propagates, as numpy's sum does
            if (delta > eps) dice[j] += 1;
          } else if (delta !== 0 && !isNaN(delta)) {
            hits[j] += 1;
            dice[j] += 1;
          }
        }
      }
      rows.push({ id: R.id[i], count: count, rel: rel, hits: hits, mu: mu, dice: dice });
    }
    return rows;
  }

  /* τ per feature: the feature's own where it has one, else the global one; NaN for non-continuous features. */
  function tauVector(features, global, own) {
    return features.map(function (f) {
      if (!f.continuous) return NaN;
      return Object.prototype.hasOwnProperty.call(own, f.name) ? own[f.name] : global;
    });
  }

  /* f_j(i), Eq. (1): the share of row i's valid counterfactuals changing feature j at τ; null when it has none. */
  function localFrequencies(features, row, tau) {
    if (row.count === 0) return null;
    return features.map(function (f, j) {
      if (!f.continuous) return row.hits[j] / row.count;
      var hits = 0, rel = row.rel[j], t = tau[j];
      for (var k = 0; k < rel.length; k++) if (rel[k] > t) hits++;
      return hits / row.count;
    });
  }

  function wilsonBounds(p, n, z) {
    var z2 = z * z, scale = 1 + z2 / n, centre = (p + z2 / (2 * n)) / scale;
    var half = z / scale * Math.sqrt(Math.max(p * (1 - p), 0) / n + z2 / (4 * n * n));
    return [centre - half, centre + half];
  }

  function clip(v, lo, hi) { return Math.min(Math.max(v, lo), hi); }

  /* flex_core._uncertainty.wilson_interval with continuity 0.5. */
  function wilson(mean, n, z) {
    if (!(n >= 1) || isNaN(mean)) return [NaN, NaN];
    var shift = 0.5 / n;
    var low = wilsonBounds(clip(mean - shift, 0, 1), n, z)[0], high = wilsonBounds(clip(mean + shift, 0, 1), n, z)[1];
    return [clip(Math.min(low, mean), 0, 1), clip(Math.max(high, mean), 0, 1)];
  }

  /* FLEX over a set of rows (positions in data.rows) at τ: F_j (Eq. 4), its 95% interval, μ_j and DiCE's frequency. */
  function importance(data, prepared, positions, tau) {
    var F = data.features, nf = F.length;
    var fSum = new Float64Array(nf), muSum = new Float64Array(nf), muN = new Float64Array(nf), dice = new Float64Array(nf);
    var used = 0, total = 0;
    for (var p = 0; p < positions.length; p++) {
      var row = prepared[positions[p]], local = localFrequencies(F, row, tau);
      if (local === null) continue;
      used++;
      total += row.count;
      for (var j = 0; j < nf; j++) {
        fSum[j] += local[j];
        dice[j] += row.dice[j];
        var mu = row.mu[j] / row.count;
        if (!isNaN(mu)) { muSum[j] += mu; muN[j] += 1; }
      }
    }
    var out = { n: used, frequency: [], ci: [], magnitude: [], dice: [] };
    for (var j2 = 0; j2 < nf; j2++) {
      var mean = used ? fSum[j2] / used : NaN;
      out.frequency.push(mean);
      var ci = wilson(mean, used, data.z);
      if (F[j2].immutable && mean === 0) ci = [0, 0];  // cannot change: 0 by construction, not by chance
      out.ci.push(ci);
      out.magnitude.push(F[j2].continuous && muN[j2] ? muSum[j2] / muN[j2] : NaN);
      out.dice.push(total ? dice[j2] / total : 0);
    }
    return out;
  }

  function included(features, regional, global) {
    return features.map(function (f, j) { return !f.immutable && !isNaN(regional[j]) && !isNaN(global[j]); });
  }

  function pick(values, keep) { return values.filter(function (v, j) { return keep[j]; }); }
  function mean(values) { var s = 0; values.forEach(function (v) { s += v; }); return s / values.length; }
  function ptp(values) { return Math.max.apply(null, values) - Math.min.apply(null, values); }

  /* flex_core.importance.compare_with_global: Pearson r over the mutable features and each one's quadrant. */
  function compare(features, regional, global) {
    var keep = included(features, regional, global), reg = pick(regional, keep), glo = pick(global, keep);
    var r = NaN;
    if (reg.length >= 3 && ptp(reg) > 0 && ptp(glo) > 0) {
      var mr = mean(reg), mg = mean(glo), sxy = 0, sxx = 0, syy = 0;
      for (var k = 0; k < reg.length; k++) {
        sxy += (reg[k] - mr) * (glo[k] - mg); sxx += (reg[k] - mr) * (reg[k] - mr); syy += (glo[k] - mg) * (glo[k] - mg);
      }
      r = clip(sxy / Math.sqrt(sxx * syy), -1, 1);
    }
    var gMid = reg.length ? mean(glo) : NaN, rMid = reg.length ? mean(reg) : NaN;
    var quadrants = features.map(function (f, j) {
      if (!keep[j]) return null;
      var hr = regional[j] > rMid, hg = global[j] > gMid;
      return hr ? (hg ? "C" : "A") : (hg ? "D" : "B");
    });
    return { r: r, quadrants: quadrants, thresholds: [gMid, rMid] };
  }

  /* flex_core._uncertainty.pearson_interval: r ± z·M/sqrt(n), the global F held as given. */
  function rInterval(features, regional, n, global, z) {
    var keep = included(features, regional, global);
    var x = pick(regional, keep), y = pick(global, keep);
    if (n < 2 || x.length < 3) return [NaN, NaN];
    var mx = mean(x), my = mean(y);
    var xc = x.map(function (v) { return v - mx; }), yc = y.map(function (v) { return v - my; });
    var xn = Math.sqrt(xc.reduce(function (s, v) { return s + v * v; }, 0));
    var yn = Math.sqrt(yc.reduce(function (s, v) { return s + v * v; }, 0));
    if (xn <= 1e-12 || yn <= 1e-12) return [NaN, NaN];
    var a = yc.map(function (v) { return v / yn; }), w = xc.map(function (v) { return v / xn; });
    var r = 0;
    for (var k = 0; k < a.length; k++) r += a[k] * w[k];
    var m = 0;
    for (var k2 = 0; k2 < a.length; k2++) { var u = (a[k2] - r * w[k2]) / xn; if (u > 0) m += u; }
    var se = m / Math.sqrt(n);
    return [Math.max(r - z * se, -1), Math.min(r + z * se, 1)];
  }

  /* A region at τ against the global F at the same τ. */
  function regional(data, prepared, positions, tau, global) {
    var imp = importance(data, prepared, positions, tau), cmp = compare(data.features, imp.frequency, global.frequency);
    return { importance: imp, global: global.frequency, r: cmp.r, quadrants: cmp.quadrants, thresholds: cmp.thresholds,
             interval: isNaN(cmp.r) ? [NaN, NaN] : rInterval(data.features, imp.frequency, imp.n, global.frequency, data.z) };
  }

  /* flex_core.plotting.thin_labels: which points of a scatter get a text label. */
  function thinLabels(x, y, gapX, gapY) {
    var n = x.length, finite = x.map(function (v, j) { return !isNaN(v) && !isNaN(y[j]); });
    var off = x.map(function (v, j) { return Math.abs(y[j] - v); });
    var candidate = finite.map(function (ok, j) { return ok && off[j] >= 0.12; });
    [x, y].forEach(function (axis) {
      var ranked = axis.map(function (v, j) { return j; }).filter(function (j) { return finite[j]; });
      ranked.sort(function (a, b) { return axis[b] - axis[a] || a - b; });
      ranked.slice(0, 3).forEach(function (j) { candidate[j] = true; });
    });
    var priority = x.map(function (v, j) { return finite[j] ? Math.max(v, y[j]) + off[j] : -Infinity; });
    var order = priority.map(function (v, j) { return j; }).sort(function (a, b) { return priority[b] - priority[a] || a - b; });
    var shown = new Array(n).fill(false);
    order.forEach(function (j) {
      if (!candidate[j]) return;
      for (var k = 0; k < n; k++) {
        if (shown[k] && Math.abs(x[k] - x[j]) < gapX && Math.abs(y[k] - y[j]) < gapY) return;
      }
      shown[j] = true;
    });
    return shown;
  }

  return { prepare: prepare, tauVector: tauVector, localFrequencies: localFrequencies, wilson: wilson,
           importance: importance, compare: compare, rInterval: rInterval, regional: regional, thinLabels: thinLabels };
})();

if (typeof module !== "undefined") module.exports = FlexMath;
