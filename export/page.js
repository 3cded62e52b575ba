// The memory view of tlcheck's HTML page. It reads the JSON in #mem-data
// (written by export/pagedata.go), draws the timeline at once and decodes
// the lives' columns only when a hover or a click first needs blocks.
// Everything from the trace is set as text (textContent), never as markup.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const dataEl = $("mem-data");
  if (!dataEl) return;
  const startMs = performance.now();
  const D = JSON.parse(dataEl.textContent);
  const parsedMs = performance.now();
  const SVGNS = "http://www.w3.org/2000/svg";
  const PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#76b7b2", "#edc948", "#b07aa1",
    "#ff9da7", "#9c755f", "#a0cbe8", "#8cd17d", "#f1ce63", "#86bcb6", "#d4a6c8"];
  const OTHER = "#c9c9c9";
  // The timeline shown (D.timelines: by time where the trace has times,
  // then by event), its buckets and its bands stacked.
  let TL = D.timelines[0], n = 0, cum = [];

  // Formats.
  function bytes(v) {
    if (v < 1024) return v + " B";
    const u = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    let i = -1;
    do { v /= 1024; i++; } while (v >= 1024 && i < u.length - 1);
    return (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2)) + " " + u[i];
  }
  function dur(ns) {
    const a = Math.abs(ns);
    if (a >= 60e9) return (ns / 60e9).toFixed(a >= 600e9 ? 0 : 1) + " min";
    if (a >= 1e9) return (ns / 1e9).toFixed(a >= 100e9 ? 0 : a >= 10e9 ? 1 : 2) + " s";
    if (a >= 1e6) return (ns / 1e6).toFixed(a >= 100e6 ? 0 : 1) + " ms";
    if (a >= 1e3) return (ns / 1e3).toFixed(a >= 100e3 ? 0 : 1) + " µs";
    return Math.round(ns) + " ns";
  }
  const xText = (x) => TL.time ? dur(x) : "event " + Math.round(x);
  const hex = (a) => "0x" + a.toString(16);
  const siteName = (s) => s < 0 ? "other sites" : (D.sites[s] || "(no site)");
  // shortSite keeps a long path's last parts: "…/nn/modules/linear.py:134".
  function shortSite(s) {
    const name = siteName(s);
    if (name.length <= 44) return name;
    const parts = name.split("/");
    let out = parts.pop();
    while (parts.length && out.length + parts[parts.length - 1].length < 40) out = parts.pop() + "/" + out;
    return "…/" + out;
  }
  const bandColor = (b) => D.bands[b].site < 0 ? OTHER : PALETTE[b % PALETTE.length];
  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function sv(tag, attrs, text) {
    const e = document.createElementNS(SVGNS, tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // The lives, decoded on first need.
  const B64 = new Uint8Array(128);
  "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".split("").forEach((c, i) => { B64[c.charCodeAt(0)] = i; });
  function unbase64(s) {
    let len = s.length;
    while (len > 0 && s.charCodeAt(len - 1) === 61) len--;
    const out = new Uint8Array((len * 3) >> 2);
    let o = 0, acc = 0, bits = 0;
    for (let i = 0; i < len; i++) {
      acc = (acc << 6) | B64[s.charCodeAt(i)];
      bits += 6;
      if (bits >= 8) { bits -= 8; out[o++] = (acc >> bits) & 255; }
    }
    return out;
  }
  // varints decodes count varints; signed ones are zig-zag; delta adds
  // each to the one before.
  function varints(s, count, signed, delta, unit) {
    const out = new Float64Array(count);
    if (!s) return out;
    const b = unbase64(s);
    let p = 0, prev = 0;
    for (let i = 0; i < count; i++) {
      let v = 0, mul = 1, c;
      do { c = b[p++]; v += (c & 127) * mul; mul *= 128; } while (c & 128);
      if (signed) v = v % 2 ? -(v + 1) / 2 : v / 2;
      if (delta) { v += prev; prev = v; }
      out[i] = unit ? v * unit : v;
    }
    return out;
  }
  function table(c, isBlocks) {
    const t = {
      n: c.n, born: varints(c.born, c.n, false, true), died: varints(c.died, c.n),
      size: varints(c.size, c.n, false, false, c.unit), addr: varints(c.addr, c.n, true, true, c.unit), site: varints(c.site, c.n),
    };
    if (isBlocks) t.seg = varints(c.seg, c.n);
    if (D.time) {
      t.bornT = varints(c.bornT, c.n, true, true, c.unitT); // ns since the first event, as x
      t.diedT = varints(c.diedT, c.n, false, false, c.unitT);
    }
    return t;
  }
  // The lives' element comes after this script, so that the timeline is
  // drawn before the browser parses it: decode runs once the document is
  // parsed.
  let lives = null;
  const parsed = () => document.readyState !== "loading";
  function decode() {
    if (!lives) {
      const c = JSON.parse($("mem-lives").textContent);
      lives = { blocks: table(c.blocks, true), segs: table(c.segments, false) };
    }
    return lives;
  }
  const liveAt = (t, i, e) => t.born[i] <= e && (t.died[i] === 0 || t.born[i] + t.died[i] - 1 > e);

  // The timeline.
  const W = 1100, H = 340, L = 74, R = 14, T = 22, Bm = 30;
  const PW = W - L - R, PH = H - T - Bm;
  const svg = $("mem-timeline");
  const yTop = Math.max(D.peak.bytes, D.peak.reserved, 1) * 1.06;
  const bx = (i) => L + (i / n) * PW;
  const xOf = (x) => L + ((x - TL.x0) / Math.max(TL.x1 - TL.x0, 1e-9)) * PW;
  const yOf = (v) => T + PH - (v / yTop) * PH;
  const midX = (i) => TL.x0 + ((i + 0.5) / n) * (TL.x1 - TL.x0); // bucket i's middle, in x
  // peakX and markX place the peak and a finding on the timeline shown.
  const peakX = () => TL.time ? D.peak.x : D.peak.event + 0.5;
  const markX = (m) => TL.time ? m.x : m.event + 0.5;
  function setTimeline(k) {
    TL = D.timelines[k];
    n = TL.sample.length;
    cum = []; // cum[b][i]: bands 0..b stacked at bucket i
    TL.bytes.forEach((bytes, b) => cum.push(bytes.map((v, i) => v + (b ? cum[b - 1][i] : 0))));
  }
  // stepPath draws vals as steps, left to right, a point only where the
  // value changes; backPath draws them right to left, from where the path
  // before it ended, to close a band.
  function stepPath(vals) {
    let d = "M" + L + " " + yOf(vals[0]).toFixed(1);
    for (let i = 1; i < n; i++) {
      if (vals[i] !== vals[i - 1]) d += "H" + bx(i).toFixed(1) + "V" + yOf(vals[i]).toFixed(1);
    }
    return d + "H" + bx(n).toFixed(1);
  }
  function backPath(vals) {
    let d = "V" + yOf(vals[n - 1]).toFixed(1);
    for (let i = n - 1; i > 0; i--) {
      if (vals[i] !== vals[i - 1]) d += "H" + bx(i).toFixed(1) + "V" + yOf(vals[i - 1]).toFixed(1);
    }
    return d + "H" + L;
  }
  function niceStep(span, want) {
    const raw = span / want, p = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= raw) return m * p;
    return 10 * p;
  }
  function drawTimeline() {
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    svg.replaceChildren();
    // y grid in powers of 1024 times 1, 2, 5.
    const unit = Math.pow(1024, Math.max(0, Math.floor(Math.log(Math.max(yTop, 1)) / Math.log(1024))));
    const ys = niceStep(yTop / unit, 4) * unit;
    for (let v = 0; v <= yTop; v += ys) {
      svg.append(sv("line", { x1: L, x2: W - R, y1: yOf(v), y2: yOf(v), class: "grid" }));
      svg.append(sv("text", { x: L - 6, y: yOf(v) + 4, class: "ytick" }, bytes(v)));
    }
    const xs = Math.max(niceStep(TL.x1 - TL.x0, 8), TL.time ? 0 : 1);
    for (let x = Math.ceil(TL.x0 / xs) * xs; x <= TL.x1; x += xs) {
      if (x === TL.x0) continue;
      svg.append(sv("line", { x1: xOf(x), x2: xOf(x), y1: T + PH, y2: T + PH + 4, class: "axis" }));
      svg.append(sv("text", { x: xOf(x), y: T + PH + 17, class: "xtick" }, TL.time ? dur(x) : String(x)));
    }
    svg.append(sv("text", { x: W - R, y: H - 1, class: "xlabel" }, TL.time ? "time since the first event" : "event"));
    // Bands, the biggest at the bottom.
    for (let b = 0; b < D.bands.length; b++) {
      const low = b ? cum[b - 1] : new Array(n).fill(0);
      const p = sv("path", { d: stepPath(cum[b]) + backPath(low) + "Z", fill: bandColor(b), class: "band", "data-band": b });
      p.append(sv("title", {}, siteName(D.bands[b].site)));
      svg.append(p);
    }
    svg.append(sv("line", { x1: L, x2: W - R, y1: T + PH, y2: T + PH, class: "axis" }));
    if (TL.envelope) svg.append(sv("path", { d: stepPath(TL.envelope), class: "envelope", id: "mem-envelope" }));
    if (D.bands.length) {
      const top = cum[D.bands.length - 1];
      svg.append(sv("path", { d: stepPath(top), class: "total" }));
    }
    // The peak.
    if (D.peak.bytes > 0 && peakX() >= TL.x0 && peakX() <= TL.x1) {
      const px = xOf(peakX()), py = yOf(D.peak.bytes);
      svg.append(sv("line", { x1: px, x2: px, y1: py, y2: T + PH, class: "peak", id: "mem-peak" }));
      svg.append(sv("circle", { cx: px, cy: py, r: 3.5, class: "peakdot" }));
      const right = px < L + PW * 0.75;
      svg.append(sv("text", { x: px + (right ? 8 : -8), y: py + 4, class: "peaklabel", "text-anchor": right ? "start" : "end" },
        "peak " + bytes(D.peak.bytes) + " at " + (D.time ? dur(D.peak.x) + ", " : "") + "event " + D.peak.event));
    }
    drawMarks();
    svg.append(sv("line", { class: "cursor", id: "mem-cursor", y1: T, y2: T + PH, x1: -10, x2: -10 }));
    svg.append(sv("line", { class: "chosen", id: "mem-chosen", y1: T, y2: T + PH, x1: -10, x2: -10 }));
  }

  // Findings, suspects and an OOM on the timeline: one mark per pixel
  // column, titled with what it stands for.
  function drawMarks() {
    const groups = new Map();
    const add = (x, cls, text, ref) => {
      if (x < TL.x0 || x > TL.x1) return; // outside a zoomed span
      const px = Math.round(xOf(x));
      const key = cls + px;
      let g = groups.get(key);
      if (!g) groups.set(key, g = { px, cls, texts: [], ref });
      g.texts.push(text);
    };
    D.marks.forEach((m, i) => add(markX(m), "finding", m.kind + " at event " + m.event + ": " + m.message, i));
    const ex = D.extras || {};
    (ex.suspects || []).forEach((s, si) => (s.events || []).forEach((e) => add(xOfEvent(e), "suspect", "leak suspect " + (s.site || "(no site)") + ": a block made at event " + e, -1 - si)));
    for (const g of groups.values()) {
      const y = g.cls === "finding" ? T - 3 : T - 12;
      const m = sv("path", { d: "M" + (g.px - 5) + " " + (y - 7) + "h10l-5 8z", class: "mark " + g.cls, "data-ref": g.ref });
      m.append(sv("title", {}, g.texts.length > 1 ? g.texts.length + " marks here; the first: " + g.texts[0] : g.texts[0]));
      m.addEventListener("click", (ev) => {
        ev.stopPropagation();
        if (g.ref >= 0) {
          const li = document.querySelectorAll("li.finding")[g.ref];
          choose(D.marks[g.ref].event);
          if (li) { li.classList.add("flash"); li.scrollIntoView({ block: "center" }); setTimeout(() => li.classList.remove("flash"), 1500); }
        }
      });
      svg.append(m);
    }
    if (ex.oom) {
      const x = xOf(xOfEvent(ex.oom.event));
      svg.append(sv("line", { x1: x, x2: x, y1: T, y2: T + PH, class: "oomline" }));
      svg.append(sv("text", { x: x - 4, y: T + PH - 6, class: "oomlabel", "text-anchor": "end" }, "out of memory"));
    }
  }
  // xOfEvent places an event by the buckets' samples (the page keeps no
  // time per event).
  function xOfEvent(e) {
    if (!TL.time) return e + 0.5;
    let lo = 0, hi = n - 1;
    while (lo < hi) { const m = (lo + hi) >> 1; if (TL.sample[m] < e) lo = m + 1; else hi = m; }
    return midX(lo);
  }

  // Hover: the moment, the band under the pointer, its largest blocks.
  const tip = $("mem-tip");
  function at(ev) {
    const r = svg.getBoundingClientRect();
    const x = (ev.clientX - r.left) * (W / r.width), y = (ev.clientY - r.top) * (H / r.height);
    let i = Math.floor(((x - L) / PW) * n);
    if (i < 0 || i >= n) return null;
    // Where buckets are narrower than a pixel, the highest of those within
    // a pixel of the pointer, so that a spike is easy to hit.
    const perPx = (n * W) / (PW * r.width);
    const top = cum.length ? cum[cum.length - 1] : null;
    if (top && perPx > 0.5) {
      const lo = Math.max(0, Math.floor(i - perPx)), hi = Math.min(n - 1, Math.ceil(i + perPx)), at = i;
      for (let k = lo; k <= hi; k++) if (top[k] > top[i] || (top[k] === top[i] && Math.abs(k - at) < Math.abs(i - at))) i = k;
    }
    const v = ((T + PH - y) / PH) * yTop;
    let band = -1;
    for (let b = 0; b < cum.length; b++) if (v >= 0 && v <= cum[b][i]) { band = b; break; }
    return { i, band, px: ev.clientX - r.left, py: ev.clientY - r.top };
  }
  function largestOf(site, e, k, otherBand) {
    const t = decode().blocks, out = [];
    const inOther = otherBand ? new Set(D.bands.filter((b) => b.site >= 0).map((b) => b.site)) : null;
    for (let j = 0; j < t.n; j++) {
      if (t.born[j] > e) break;
      if (!liveAt(t, j, e)) continue;
      if (otherBand ? inOther.has(t.site[j]) : t.site[j] !== site) continue;
      out.push(j);
    }
    out.sort((a, b) => t.size[b] - t.size[a]);
    return { count: out.length, top: out.slice(0, k) };
  }
  function showHover(h) {
    const e = TL.sample[h.i], cur = $("mem-cursor"), x = bx(h.i + 0.5);
    cur.setAttribute("x1", x); cur.setAttribute("x2", x);
    const total = cum.length ? cum[cum.length - 1][h.i] : 0;
    tip.replaceChildren();
    tip.append(el("div", { class: "tipwhen" }, (TL.time ? dur(midX(h.i)) + " · " : "") + "event " + e));
    tip.append(el("div", {}, D.allocated + ": " + bytes(total)));
    if (TL.envelope) tip.append(el("div", {}, D.reserved + ": " + bytes(TL.envelope[h.i])));
    if (h.band >= 0) {
      const b = D.bands[h.band];
      const row = el("div", { class: "tipsite" });
      row.append(el("span", { class: "swatch", style: "background:" + bandColor(h.band) }));
      row.append(document.createTextNode(shortSite(b.site) + ": " + bytes(TL.bytes[h.band][h.i])));
      tip.append(row);
    }
    tip.hidden = false;
    const r = svg.getBoundingClientRect();
    tip.style.left = Math.min(h.px + 14, r.width - tip.offsetWidth - 4) + "px";
    tip.style.top = Math.max(h.py - tip.offsetHeight - 10, 0) + "px";
    showBand(h.band, h.i);
  }
  // showBand fills the hover panel: the site's stack and its largest
  // blocks live at the bucket's moment.
  let shownBand = null;
  function showBand(band, i) {
    const key = band + ":" + i + ":" + TL.time;
    if (band < 0 || key === shownBand) return;
    shownBand = key;
    const b = D.bands[band], e = TL.sample[i], box = $("mem-hover");
    box.replaceChildren();
    if (!parsed()) {
      shownBand = null;
      box.append(el("span", { class: "hint" }, "The blocks are still loading."));
      return;
    }
    const head = el("div", { class: "hovhead" });
    head.append(el("span", { class: "swatch", style: "background:" + bandColor(band) }));
    head.append(el("b", {}, siteName(b.site)));
    head.append(document.createTextNode(" · " + bytes(TL.bytes[band][i]) + " live at event " + e + " · at the peak " + bytes(b.atPeak)));
    box.append(head);
    const got = largestOf(b.site, e, 6, b.site < 0);
    box.append(el("div", { class: "hovsub" }, got.count + (got.count === 1 ? " block" : " blocks") + " live; the largest:"));
    box.append(blockList(got.top));
  }
  function blockList(rows) {
    const t = decode().blocks, ul = el("ul", { class: "blocks" });
    for (const j of rows) {
      const li = el("li", { class: "block" });
      li.append(el("code", {}, bytes(t.size[j])));
      li.append(document.createTextNode(" at " + hex(t.addr[j]) + ", made at " + madeText(t, j) + " by "));
      li.append(stackOf(t.site[j]));
      ul.append(li);
    }
    return ul;
  }
  const stackOf = (s) => el("code", { class: "stack" }, siteName(s));
  function madeText(t, j) {
    return "event " + t.born[j] + (D.time ? " (" + dur(t.bornT[j]) + ")" : "");
  }
  svg.addEventListener("mousemove", (ev) => { const h = at(ev); if (h) showHover(h); else tip.hidden = true; });
  svg.addEventListener("mouseleave", () => { tip.hidden = true; $("mem-cursor").setAttribute("x1", -10); $("mem-cursor").setAttribute("x2", -10); });
  svg.addEventListener("click", (ev) => {
    if (dragged) { dragged = false; return; }
    const h = at(ev);
    if (h) { showHover(h); choose(TL.sample[h.i], h.i); }
  });

  // Zoom: a drag across the timeline draws that span again from the lives
  // themselves, at the full 1,200 points; "whole trace" goes back.
  let base = 0, from = null, dragged = false;
  const xAt = (clientX) => {
    const r = svg.getBoundingClientRect(), x = (clientX - r.left) * (W / r.width);
    return TL.x0 + Math.min(Math.max((x - L) / PW, 0), 1) * (TL.x1 - TL.x0);
  };
  svg.addEventListener("mousedown", (ev) => { if (ev.button === 0) from = ev.clientX; });
  svg.addEventListener("mousemove", (ev) => {
    if (from === null || !(ev.buttons & 1)) return;
    const a = xOf(xAt(Math.min(from, ev.clientX))), b = xOf(xAt(Math.max(from, ev.clientX)));
    let brush = $("mem-brush");
    if (!brush) svg.append(brush = sv("rect", { id: "mem-brush", class: "brush", y: T, height: PH }));
    brush.setAttribute("x", a);
    brush.setAttribute("width", Math.max(b - a, 0));
  });
  window.addEventListener("mouseup", (ev) => {
    if (from === null) return;
    const a = xAt(Math.min(from, ev.clientX)), b = xAt(Math.max(from, ev.clientX)), px = Math.abs(ev.clientX - from);
    from = null;
    const brush = $("mem-brush");
    if (brush) brush.remove();
    if (px < 6 || !parsed()) return;
    dragged = true;
    setTimeout(() => { dragged = false; }, 0); // a drag that ends off the plot has no click
    zoomTo(a, b);
  });
  function zoomTo(xa, xb) {
    if (!TL.time) { xa = Math.floor(xa); xb = Math.max(Math.ceil(xb), xa + 1); }
    if (xb <= xa) return;
    const z = zoomed(xa, xb);
    TL = z; n = z.sample.length;
    cum = [];
    TL.bytes.forEach((bytes, b) => cum.push(bytes.map((v, i) => v + (b ? cum[b - 1][i] : 0))));
    drawTimeline();
    $("mem-unzoom").hidden = false;
    document.body.dataset.memZoom = xa + "-" + xb;
  }
  function unzoom() {
    setTimeline(base);
    drawTimeline();
    $("mem-unzoom").hidden = true;
    delete document.body.dataset.memZoom;
  }
  // zoomed samples [xa, xb] of the shown axis from the lives, as the Go
  // side samples the whole trace: each bucket at its highest total.
  function zoomed(xa, xb) {
    const { blocks, segs } = decode(), time = TL.time, nb = D.bands.length;
    const bandOf = new Map(D.bands.map((b, k) => [b.site, k]));
    const other = bandOf.has(-1) ? bandOf.get(-1) : nb; // nb: a spare for sites never live
    const m = time ? 1200 : Math.max(1, Math.min(1200, xb - xa));
    const z = { time, x0: xa, x1: xb, sample: new Array(m).fill(0), bytes: D.bands.map(() => new Array(m).fill(0)), envelope: D.reserved ? new Array(m).fill(0) : null };
    const now = new Float64Array(nb + 1), ch = [];
    let total = 0, res = 0, before = -1; // before: the last event at or before xa
    const lives = (t, seg) => {
      for (let j = 0; j < t.n; j++) {
        const born = t.born[j], d = t.died[j];
        if (d === 1) continue; // ends at the event that made it
        const died = d ? born + d - 1 : Infinity;
        const x0 = time ? t.bornT[j] : born, x1 = d ? (time ? t.bornT[j] + t.diedT[j] : died) : Infinity;
        if (x0 <= xa) before = Math.max(before, born);
        if (x1 <= xa) { before = Math.max(before, died); continue; }
        if (x0 > xb) continue;
        const band = seg ? -1 : (bandOf.has(t.site[j]) ? bandOf.get(t.site[j]) : other), size = t.size[j];
        if (x0 <= xa) {
          if (seg) res += size; else { total += size; now[band] += size; }
        } else ch.push([born, x0, size, band]);
        if (x1 <= xb) ch.push([died, x1, -size, band]);
      }
    };
    lives(blocks, false);
    lives(segs, true);
    ch.sort((a, b) => a[0] - b[0] || a[2] - b[2]); // by event, an event's ends first
    const best = new Float64Array(m).fill(-1);
    const record = (k, e) => {
      if (total > best[k]) {
        best[k] = total; z.sample[k] = e;
        for (let b = 0; b < nb; b++) z.bytes[b][k] = now[b];
      }
      if (z.envelope) z.envelope[k] = Math.max(z.envelope[k], res);
    };
    const bucketOf = (x) => Math.min(m - 1, Math.max(0, Math.floor(((x - xa) / (xb - xa)) * m)));
    let cur = -1, last = Math.max(before, 0);
    for (let i = 0; i < ch.length;) {
      const e = ch[i][0], k = bucketOf(ch[i][1]);
      for (let q = cur + 1; q <= k; q++) record(q, last);
      cur = Math.max(cur, k);
      for (; i < ch.length && ch[i][0] === e; i++) {
        const [, , size, band] = ch[i];
        if (band < 0) res += size; else { total += size; now[band] += size; }
      }
      record(k, e);
      last = e;
    }
    for (let q = cur + 1; q < m; q++) record(q, last);
    return z;
  }

  // The allocator's state at a chosen event: each segment a row, its
  // length by its size, its blocks coloured by site; free space grey.
  const canvas = $("mem-state");
  let state = null;
  function bandOfSite(s) {
    for (let b = 0; b < D.bands.length; b++) if (D.bands[b].site === s) return b;
    return D.bands.length - 1;
  }
  let chosen = -1, chosenAt = -1;
  function choose(e, i) {
    if (!parsed()) {
      document.addEventListener("DOMContentLoaded", () => choose(e, i), { once: true });
      return;
    }
    if (i === undefined) {
      // The first bucket that shows e, or else the last before it.
      i = 0;
      while (i + 1 < n && TL.sample[i] < e && TL.sample[i + 1] <= e) i++;
    }
    chosen = e;
    chosenAt = i;
    const c = $("mem-chosen"), x = bx(i + 0.5);
    c.setAttribute("x1", x); c.setAttribute("x2", x);
    const { blocks, segs } = decode();
    const rows = [], bySeg = new Map();
    let alloc = 0, nb = 0, res = 0;
    for (let j = 0; j < segs.n && segs.born[j] <= e; j++) {
      if (!liveAt(segs, j, e)) continue;
      const r = { seg: j, addr: segs.addr[j], size: segs.size[j], blocks: [] };
      bySeg.set(j, r); rows.push(r); res += segs.size[j];
    }
    const loose = { seg: -1, addr: 0, size: 0, blocks: [] };
    for (let j = 0; j < blocks.n && blocks.born[j] <= e; j++) {
      if (!liveAt(blocks, j, e)) continue;
      alloc += blocks.size[j]; nb++;
      const r = bySeg.get(blocks.seg[j] - 1) || loose;
      r.blocks.push(j);
    }
    rows.sort((a, b) => a.addr - b.addr);
    let largestFree = 0;
    for (const r of rows) {
      r.blocks.sort((a, b) => blocks.addr[a] - blocks.addr[b]);
      let at = r.addr;
      for (const j of r.blocks) { largestFree = Math.max(largestFree, blocks.addr[j] - at); at = blocks.addr[j] + blocks.size[j]; }
      largestFree = Math.max(largestFree, r.addr + r.size - at);
    }
    state = { e, rows, loose, blocks };
    const title = $("mem-state-title");
    title.replaceChildren();
    title.append(el("b", {}, "At event " + e + (TL.time ? " (" + dur(midX(i)) + ")" : "") + ": "));
    const parts = [nb + (nb === 1 ? " block " : " blocks ") + (D.reserved ? "allocated" : "live") + ", " + bytes(alloc)];
    if (D.reserved) parts.push(rows.length + (rows.length === 1 ? " segment" : " segments") + " reserved, " + bytes(res),
      bytes(Math.max(res - alloc, 0)) + " reserved but free, the largest free range " + bytes(largestFree));
    title.append(document.createTextNode(parts.join("; ") + "."));
    drawState();
    $("mem-block").replaceChildren(el("span", { class: "hint" }, D.reserved ? "Hover a block for its stack; click to keep it." : ""));
    if (!D.reserved) heapState();
    document.body.dataset.memChosen = String(e);
  }
  const LABEL = 200, ROW = 18, GAP = 5;
  function drawState() {
    if (!D.reserved) { $("mem-statebox").hidden = true; return; }
    canvas.hidden = false;
    const rows = state.rows, wCss = canvas.parentElement.clientWidth || 1000;
    const maxSize = rows.reduce((m, r) => Math.max(m, r.size), 1);
    const hCss = Math.max(rows.length, 1) * (ROW + GAP) + GAP;
    const dpr = window.devicePixelRatio || 1;
    canvas.width = wCss * dpr; canvas.height = hCss * dpr;
    canvas.style.width = wCss + "px"; canvas.style.height = hCss + "px";
    const g = canvas.getContext("2d");
    g.scale(dpr, dpr);
    g.font = "12px ui-monospace, monospace";
    g.textBaseline = "middle";
    const barW = wCss - LABEL - 8;
    rows.forEach((r, k) => {
      const y = GAP + k * (ROW + GAP);
      r.y = y; r.w = Math.max(barW * (r.size / maxSize), 24);
      g.fillStyle = "#555";
      g.fillText(hex(r.addr) + "  " + bytes(r.size), 4, y + ROW / 2);
      g.fillStyle = "#eceff1";
      g.fillRect(LABEL, y, r.w, ROW);
      for (const j of r.blocks) {
        const x0 = LABEL + ((state.blocks.addr[j] - r.addr) / r.size) * r.w;
        const w = Math.max((state.blocks.size[j] / r.size) * r.w, 1);
        g.fillStyle = bandColor(bandOfSite(state.blocks.site[j]));
        g.fillRect(x0, y, w, ROW);
      }
      g.strokeStyle = "#90a4ae";
      g.strokeRect(LABEL + 0.5, y + 0.5, r.w - 1, ROW - 1);
    });
    if (!rows.length) { g.fillStyle = "#777"; g.fillText("No segment is reserved at this moment.", 4, ROW / 2 + GAP); }
  }
  function heapState() {
    const t = state.blocks, all = [];
    for (const r of [state.loose]) for (const j of r.blocks) all.push(j);
    all.sort((a, b) => t.size[b] - t.size[a]);
    const box = $("mem-block");
    box.replaceChildren(el("div", { class: "hovsub" }, all.length + " live; the largest:"), blockList(all.slice(0, 20)));
  }
  function blockAt(ev) {
    if (!state || !D.reserved) return -1;
    const r = canvas.getBoundingClientRect(), x = ev.clientX - r.left, y = ev.clientY - r.top;
    const row = state.rows.find((w) => y >= w.y && y < w.y + ROW);
    if (!row || x < LABEL || x > LABEL + row.w) return -1;
    const a = row.addr + ((x - LABEL) / row.w) * row.size;
    const slack = row.size / row.w; // a pixel's bytes, so that thin blocks can be hit
    let best = -1;
    for (const j of row.blocks) {
      if (a >= state.blocks.addr[j] - slack && a < state.blocks.addr[j] + state.blocks.size[j] + slack) {
        if (best < 0 || Math.abs(a - state.blocks.addr[j]) < Math.abs(a - state.blocks.addr[best])) best = j;
      }
    }
    return best;
  }
  let pinned = false;
  // outline draws a frame around block j in the state.
  function outline(j) {
    const row = state.rows.find((r) => r.blocks.includes(j));
    if (!row) return;
    const g = canvas.getContext("2d"), dpr = window.devicePixelRatio || 1;
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    const x0 = LABEL + ((state.blocks.addr[j] - row.addr) / row.size) * row.w;
    const w = Math.max((state.blocks.size[j] / row.size) * row.w, 1);
    g.strokeStyle = "#212121";
    g.lineWidth = 2;
    g.strokeRect(x0 + 1, row.y + 1, Math.max(w - 2, 1), ROW - 2);
  }
  function showBlock(j) {
    drawState();
    outline(j);
    const t = state.blocks, box = $("mem-block");
    box.replaceChildren();
    const head = el("div", { class: "hovhead" });
    head.append(el("span", { class: "swatch", style: "background:" + bandColor(bandOfSite(t.site[j])) }));
    head.append(el("b", {}, "block " + hex(t.addr[j]) + ", " + bytes(t.size[j])));
    box.append(head);
    const end = t.died[j] === 0 ? "live at the end" : "freed at event " + (t.born[j] + t.died[j] - 1) + (D.time ? " (" + dur(t.bornT[j] + t.diedT[j]) + ")" : "");
    const seg = t.seg[j] > 0 ? "; in segment " + hex(state.rows.find((r) => r.blocks.includes(j)).addr) : "";
    box.append(el("div", {}, "made at " + madeText(t, j) + "; " + end + seg));
    const st = el("div", { class: "stackbox" });
    st.append(el("div", { class: "hovsub" }, "stack (the trace's site of the event that made it):"));
    st.append(el("pre", { class: "stack", id: "mem-stack" }, siteName(t.site[j])));
    box.append(st);
    box.dataset.block = String(j);
  }
  canvas.addEventListener("mousemove", (ev) => { if (pinned) return; const j = blockAt(ev); if (j >= 0) showBlock(j); });
  canvas.addEventListener("click", (ev) => { const j = blockAt(ev); pinned = j >= 0; if (j >= 0) showBlock(j); });

  // The legend: each band's site, what it held at the peak.
  function drawLegend() {
    const box = $("mem-legend");
    box.replaceChildren();
    D.bands.forEach((b, k) => {
      const it = el("div", { class: "legitem", title: siteName(b.site) });
      it.append(el("span", { class: "swatch", style: "background:" + bandColor(k) }));
      it.append(el("code", {}, shortSite(b.site)));
      it.append(el("span", { class: "legbytes" }, bytes(b.atPeak)));
      box.append(it);
    });
    if (D.reserved) {
      const it = el("div", { class: "legitem" });
      it.append(el("span", { class: "swatch env" }));
      it.append(el("span", {}, D.reserved + ", peak " + bytes(D.peak.reserved)));
      box.append(it);
    }
  }

  // Leak suspects and the OOM explanation, where an analysis gave them.
  function drawExtras() {
    const ex = D.extras || {};
    if (ex.suspects && ex.suspects.length) {
      const s = $("mem-suspects");
      s.hidden = false;
      const tb = el("table", { class: "grid" });
      const hr = el("tr");
      ["site", "per iteration", "iterations", "how sure"].forEach((h) => hr.append(el("th", {}, h)));
      tb.append(hr);
      for (const x of ex.suspects) {
        const tr = el("tr", { class: "suspect" });
        const td = el("td");
        td.append(el("code", {}, x.site || "(no site)"));
        if (x.stack && x.stack.length) td.append(el("pre", { class: "stack" }, x.stack.join("\n")));
        tr.append(td, el("td", {}, bytes(x.bytesPerIteration) + " in " + x.blocksPerIteration + (x.blocksPerIteration === 1 ? " block" : " blocks")),
          el("td", {}, String(x.iterations)), el("td", {}, x.confidence || ""));
        tb.append(tr);
      }
      s.append(tb);
    }
    const o = ex.oom;
    if (o) {
      const s = $("mem-oom");
      s.hidden = false;
      s.append(el("p", {}, "At event " + o.event + " a request for " + bytes(o.request) + " failed" +
        (o.capacity ? " on a device of " + bytes(o.capacity) : "") + ": " + bytes(o.allocated) + " allocated, " +
        bytes(o.reserved) + " reserved (" + bytes(Math.max(o.reserved - o.allocated, 0)) + " reserved but free)."));
      if (o.note) s.append(el("p", {}, o.note));
      const t = (heads, rows) => {
        const tb = el("table", { class: "grid" }), hr = el("tr");
        heads.forEach((h) => hr.append(el("th", {}, h)));
        tb.append(hr);
        rows.forEach((r) => { const tr = el("tr"); r.forEach((c) => tr.append(el("td", {}, c))); tb.append(tr); });
        return tb;
      };
      if (o.pools && o.pools.length) s.append(el("h4", {}, "Free space by pool"), t(["pool", "reserved but free", "largest free block"], o.pools.map((p) => [p.pool, bytes(p.freeBytes), bytes(p.largestFree)])));
      if (o.sites && o.sites.length) s.append(el("h4", {}, "What held the memory"), t(["site", "bytes"], o.sites.map((p) => [p.site, bytes(p.bytes)])));
      if (o.whatIf && o.whatIf.length) s.append(el("h4", {}, "What if: the same allocations under other settings"), t(["setting", "peak reserved", "the request"], o.whatIf.map((w) => [w.setting, bytes(w.peakReserved), w.fits ? "fits" : "does not fit"])));
    }
  }

  function describe() {
    const p = $("mem-sub");
    let s = D.reserved ? "The allocated bytes of the " + D.space + " (blocks handed out), stacked by allocation site; the dashed line is the reserved bytes (segments), which hold them."
      : "The live bytes of the " + D.space + ", stacked by allocation site.";
    s += " " + (D.time ? "Time runs along the bottom (or events: a spike that takes no time is wide by events)." : "The trace has no times: events run along the bottom.");
    s += " Hover for the site under the pointer and its largest blocks; click to see the allocator's state at that moment, and step with the arrow keys.";
    if (D.cut >= 0) s += " The page keeps the lives up to event " + D.cut + " only; later ones are not drawn.";
    p.textContent = s;
  }

  // The axis: by time or by event.
  function drawAxisChoice() {
    const box = $("mem-axis");
    const whole = el("button", { type: "button", id: "mem-unzoom", hidden: "" }, "whole trace");
    whole.addEventListener("click", () => { unzoom(); if (chosen >= 0) choose(chosen); });
    if (D.timelines.length < 2) { box.append(whole); return; }
    box.append(el("span", {}, "x axis: "));
    ["time", "events"].forEach((name, k) => {
      const b = el("button", { type: "button", "data-k": k, "aria-pressed": k === 0 ? "true" : "false" }, name);
      b.addEventListener("click", () => {
        base = k;
        $("mem-unzoom").hidden = true;
        delete document.body.dataset.memZoom;
        setTimeline(k);
        box.querySelectorAll("button").forEach((x) => x.setAttribute("aria-pressed", x === b ? "true" : "false"));
        drawTimeline();
        if (chosen >= 0) choose(chosen);
      });
      box.append(b);
    });
    box.append(whole);
  }

  // Each finding in the list shows the memory at its event when clicked
  // (the list and the marks are in the same order).
  function linkFindings() {
    document.querySelectorAll("li.finding").forEach((li, k) => {
      if (k >= D.marks.length) return;
      li.classList.add("linked");
      li.title = "click to see the memory at event " + D.marks[k].event;
      li.addEventListener("click", () => {
        choose(D.marks[k].event);
        $("memory").scrollIntoView({ block: "start" });
      });
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", linkFindings);
  else linkFindings();

  setTimeline(0);
  if (!D.reserved) $("mem-state-h").textContent = "Live blocks";
  describe();
  drawLegend();
  drawAxisChoice();
  drawTimeline();
  drawExtras();
  window.addEventListener("resize", () => { if (state) drawState(); });
  // The arrow keys step the chosen moment to the next bucket that shows
  // another event.
  document.addEventListener("keydown", (ev) => {
    const step = { ArrowRight: 1, ArrowLeft: -1 }[ev.key];
    if (!step || chosenAt < 0 || ev.target.closest("input, textarea, button")) return;
    let i = chosenAt;
    while (i + step >= 0 && i + step < n && TL.sample[i] === chosen) i += step;
    if (TL.sample[i] !== chosen) { choose(TL.sample[i], i); ev.preventDefault(); }
  });
  const page = window.tlcheckPage = { startMs, parsedMs, drawnMs: performance.now(), readyMs: NaN, stateMs: NaN, choose, decode };
  // Once the timeline is on screen and the document parsed, the state at
  // the peak: that decodes the lives, which takes a moment on a big trace.
  requestAnimationFrame(() => {
    page.readyMs = performance.now();
    document.body.dataset.memReady = "1";
    const atPeak = () => setTimeout(() => {
      choose(D.peak.event);
      page.stateMs = performance.now();
    }, 0);
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", atPeak);
    else atPeak();
  });
})();
