/* rdbscan HTML pages: sortable tables, the family treemap and the slot heat map.
   Reads the data embedded as JSON (element id rdbscan-report, -diff or -trend); makes no network
   request. */
(function () {
  "use strict";
  /* the report's data, or a diff's or a trend's (rdbscan-diff, rdbscan-trend: no treemap) */
  var data = document.querySelector('script[type="application/json"][id^="rdbscan-"]');
  var report = data ? JSON.parse(data.textContent) : {};
  var UNITS = { "B": 1, "KiB": 1024, "MiB": 1048576, "GiB": 1073741824, "TiB": 1099511627776 };

  function fmtBytes(n) {
    var units = ["B", "KiB", "MiB", "GiB", "TiB"], i = 0;
    while (Math.abs(n) >= 1024 && i < units.length - 1) { n /= 1024; i++; }
    return i === 0 ? Math.round(n) + " B" : n.toFixed(1) + " " + units[i];
  }
  function pct(x) { return (x * 100).toFixed(1) + "%"; }

  /* --- sortable tables: numbers (1,234 / 1.2 MiB / 45.0%) sort as numbers --- */
  function sortKey(text) {
    var t = text.trim().replace(/,/g, "");
    var m = /^(-?[\d.]+) ?(B|KiB|MiB|GiB|TiB)$/.exec(t);
    if (m) { return parseFloat(m[1]) * UNITS[m[2]]; }
    m = /^(-?[\d.]+)%$/.exec(t);
    if (m) { return parseFloat(m[1]); }
    if (/^-?[\d.]+$/.test(t)) { return parseFloat(t); }
    return null;
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
    var ths = table.querySelectorAll("thead th");
    Array.prototype.forEach.call(ths, function (th, col) {
      th.addEventListener("click", function () {
        var desc = !th.classList.contains("sorted-desc");
        Array.prototype.forEach.call(ths, function (h) { h.classList.remove("sorted-asc", "sorted-desc"); });
        th.classList.add(desc ? "sorted-desc" : "sorted-asc");
        var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = a.cells[col].textContent, y = b.cells[col].textContent;
          var kx = sortKey(x), ky = sortKey(y), r;
          if (kx !== null && ky !== null) { r = kx - ky; } else { r = x.localeCompare(y); }
          return desc ? -r : r;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });

  /* --- treemap of the family prefixes (squarified layout), drill-down on click --- */
  var charts = report.charts || {};
  var nodes = charts.family_tree || [];
  var COLORS = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
                "#9c755f", "#bab0ac"];
  function childrenOf(parent, depth) {
    return nodes.filter(function (n) { return n.depth === depth && n.parent === parent; });
  }
  function worst(row, side) {
    var s = 0, mx = 0, mn = Infinity;
    row.forEach(function (r) { s += r.area; mx = Math.max(mx, r.area); mn = Math.min(mn, r.area); });
    return Math.max(side * side * mx / (s * s), (s * s) / (side * side * mn));
  }
  function squarify(items, x, y, w, h, out) {
    items = items.slice();
    while (items.length) {
      var side = Math.min(w, h), row = [items[0]], i = 1;
      while (i < items.length && worst(row.concat([items[i]]), side) <= worst(row, side)) { row.push(items[i]); i++; }
      items = items.slice(i);
      var sum = row.reduce(function (a, r) { return a + r.area; }, 0);
      if (w >= h) {
        var cw = sum / h, cy = y;
        row.forEach(function (r) { var rh = r.area / cw; out.push([r, x, cy, cw, rh]); cy += rh; });
        x += cw; w -= cw;
      } else {
        var ch = sum / w, cx = x;
        row.forEach(function (r) { var rw = r.area / ch; out.push([r, cx, y, rw, ch]); cx += rw; });
        y += ch; h -= ch;
      }
    }
    return out;
  }
  var tm = document.getElementById("treemap"), crumbs = document.getElementById("crumbs");
  var total = nodes.filter(function (n) { return n.depth === 1; })
                   .reduce(function (a, n) { return a + n.memory_bytes; }, 0);
  function drawTree(path) {
    if (!tm) { return; }
    var parent = path.length ? path[path.length - 1] : null;
    var depth = path.length + 1;
    var kids = childrenOf(parent ? parent.prefix : null, depth).filter(function (n) { return n.memory_bytes > 0; });
    while (tm.firstChild) { tm.removeChild(tm.firstChild); }
    while (crumbs.firstChild) { crumbs.removeChild(crumbs.firstChild); }
    var trail = [{ prefix: "all families", depth: 0 }].concat(path);
    trail.forEach(function (n, i) {
      if (i) { crumbs.appendChild(document.createTextNode(" › ")); }
      if (i < trail.length - 1) {
        var a = document.createElement("a");
        a.textContent = n.prefix;
        a.addEventListener("click", function () { drawTree(path.slice(0, i)); });
        crumbs.appendChild(a);
      } else {
        var b = document.createElement("b");
        b.textContent = n.prefix;
        crumbs.appendChild(b);
      }
    });
    var W = tm.clientWidth || 800, H = tm.clientHeight || 440;
    var sum = kids.reduce(function (a, n) { return a + n.memory_bytes; }, 0) || 1;
    var items = kids.map(function (n) { return { node: n, area: n.memory_bytes / sum * W * H }; })
                    .sort(function (a, b) { return b.area - a.area; });
    squarify(items, 0, 0, W, H, []).forEach(function (cell, i) {
      var n = cell[0].node, div = document.createElement("div");
      var drill = n.prefix !== "(other)" && childrenOf(n.prefix, n.depth + 1).length > 0;
      div.className = "tm" + (drill ? " drill" : "");
      div.style.left = cell[1] + "px"; div.style.top = cell[2] + "px";
      div.style.width = cell[3] + "px"; div.style.height = cell[4] + "px";
      div.style.background = COLORS[i % COLORS.length];
      /* what a block holds is written in it (name, memory, share), not only in its tooltip */
      var name = document.createElement("b"), size = document.createElement("span");
      name.textContent = n.prefix;
      size.className = "tmv";
      size.textContent = fmtBytes(n.memory_bytes) + " · " + pct(total ? n.memory_bytes / total : 0);
      div.appendChild(name);
      div.appendChild(size);
      div.title = n.prefix + "\n" + n.keys.toLocaleString("en-US") + " keys\n" + fmtBytes(n.memory_bytes) +
        " (" + pct(total ? n.memory_bytes / total : 0) + " of all memory)\nTTL coverage " +
        pct(n.keys ? n.keys_with_ttl / n.keys : 0) + (drill ? "\nclick to drill down" : "");
      if (drill) { div.addEventListener("click", function () { drawTree(path.concat([n])); }); }
      tm.appendChild(div);
    });
  }
  drawTree([]);

  /* --- slot heat map: 128 x 128 cells, log colour scale of keys per slot --- */
  var canvas = document.getElementById("slotmap");
  if (canvas && charts.slots) {
    var keys = new Array(16384), mem = new Array(16384), maxKeys = 1, i;
    for (i = 0; i < 16384; i++) { keys[i] = 0; mem[i] = 0; }
    charts.slots.forEach(function (s) { keys[s.slot] = s.keys; mem[s.slot] = s.memory_bytes; maxKeys = Math.max(maxKeys, s.keys); });
    var ctx = canvas.getContext("2d"), cell = canvas.width / 128;
    for (i = 0; i < 16384; i++) {
      var v = keys[i] ? Math.log(1 + keys[i]) / Math.log(1 + maxKeys) : 0;
      ctx.fillStyle = keys[i] ? "rgb(" + Math.round(255 - 30 * v) + "," + Math.round(230 - 190 * v) + "," +
        Math.round(120 - 100 * v) + ")" : "#eef1f4";
      ctx.fillRect((i % 128) * cell, Math.floor(i / 128) * cell, cell, cell);
    }
    var legend = document.getElementById("slotlegend");
    legend.textContent = "max " + maxKeys.toLocaleString("en-US") + " keys in one slot";
    canvas.addEventListener("mousemove", function (ev) {
      var r = canvas.getBoundingClientRect();
      var col = Math.floor((ev.clientX - r.left) / r.width * 128), row = Math.floor((ev.clientY - r.top) / r.height * 128);
      var slot = row * 128 + col;
      if (slot >= 0 && slot < 16384) {
        legend.textContent = "slot " + slot + ": " + keys[slot].toLocaleString("en-US") + " keys, " + fmtBytes(mem[slot]);
      }
    });
  }
})();
