/* tsteval explorer: the per-sentence table (Tabulator), its filters, the tradeoff scatter and the correlation
   heatmap (Plotly), and the side-by-side view of one input.  Every text from the data is put in with
   textContent or text nodes, never as HTML; Plotly labels get <, > and & as entities (shown as characters). */
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("tsteval-data").textContent);
  const R = data.rows;
  const scores = data.scores.map((s) => s.name);
  const info = Object.fromEntries(data.scores.map((s) => [s.name, s]));
  const rows = [];
  for (let i = 0; i < data.n; i++) {
    const row = { _i: i };
    for (const key of Object.keys(R)) row[key] = R[key][i];
    rows.push(row);
  }

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function fmt(v) { return v === null || v === undefined || !Number.isFinite(Number(v)) ? "" : Number(v).toFixed(3); }
  function plotlyText(s) { return String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;"); }
  function arrow(name) { return info[name].higher_is_better ? " ↑" : " ↓"; }
  function unique(values) { return Array.from(new Set(values)).sort(); }

  document.getElementById("title").textContent = data.title;
  document.title = "tsteval explorer: " + data.title;
  document.getElementById("about").textContent =
    `${data.n} transfers, ${unique(R.system).length} systems, ${scores.length} score columns` +
    (data.masked ? `; masked text: lexicon words replaced by ${data.placeholder}, as the @mask metrics saw them` :
      "; no lexicon, so no masked text");
  /* the run's warnings (leakage, swapped styles, the copy baseline's rank, empty outputs, ...), as text */
  const failures = Object.entries(data.empty_outputs || {}).filter(([, n]) => n > 0);
  const notices = document.getElementById("notices");
  for (const line of data.notices || []) notices.appendChild(el("li", "Warning: " + line));
  notices.appendChild(el("li", "Empty outputs per system (scored as failures): " +
    (failures.length ? failures.map(([s, n]) => `${s} ${n}`).join(", ") : "none")));

  /* ---- filters: our layer over Tabulator's filter function ---- */
  const state = { system: "", setting: "", direction: "", search: "", ranges: {} };
  function fillSelect(id, values) {
    const select = document.getElementById(id);
    select.appendChild(el("option", "(all)")).value = "";
    for (const v of unique(values)) select.appendChild(el("option", v)).value = v;
    return select;
  }
  const selects = { system: fillSelect("f-system", R.system), setting: fillSelect("f-setting", R.setting),
    direction: fillSelect("f-direction", R.direction) };
  const searched = ["input", "output", "input_masked", "output_masked"].filter((k) => k in R);

  function passes(row) {
    if (state.system && row.system !== state.system) return false;
    if (state.setting && row.setting !== state.setting) return false;
    if (state.direction && row.direction !== state.direction) return false;
    if (state.search) {
      const needle = state.search.toLowerCase();
      if (!searched.some((k) => String(row[k]).toLowerCase().includes(needle))) return false;
    }
    for (const [name, range] of Object.entries(state.ranges)) {
      const v = row[name];
      if (range.min !== null && (v === null || v < range.min)) return false;
      if (range.max !== null && (v === null || v > range.max)) return false;
    }
    return true;
  }

  /* ---- the table ---- */
  function textCell(cell) {
    cell.getElement().style.whiteSpace = "normal";
    cell.getElement().style.overflowWrap = "anywhere";
    const v = cell.getValue();
    return document.createTextNode(v === null || v === undefined ? "" : String(v));
  }
  function numberCell(cell) { return document.createTextNode(fmt(cell.getValue())); }
  function breakable(text) {
    /* The text with a line-break opportunity (<wbr>) after every "@", "_" and "." so that a long column name
       wraps at its parts instead of being cut off; text nodes only. */
    const span = el("span");
    for (const part of String(text).split(/(?<=[@_.])/)) {
      span.appendChild(document.createTextNode(part));
      span.appendChild(document.createElement("wbr"));
    }
    return span;
  }
  function header(text, tip) {
    /* A header that wraps (never truncated) and whose tooltip holds the full name (and the signature). */
    return function () {
      const span = breakable(text);
      span.className = "col-name";
      span.title = tip ? `${text}\n${tip}` : text;
      return span;
    };
  }
  const columns = [
    { title: "system", field: "system", width: 130 }, { title: "setting", field: "setting", width: 90 },
    { title: "direction", field: "direction", width: 105 }, { title: "item", field: "item", width: 70 },
    ...data.hyperparameters.map((h) => ({ title: h, field: h, width: 95 })),
    { title: "input", field: "input", width: 260 }, { title: "output", field: "output", width: 260 },
  ].map((c) => ({ ...c, formatter: textCell, titleFormatter: header(c.title), headerWordWrap: true }));
  if (data.masked) {
    columns.push({ title: "output (masked)", field: "output_masked", width: 240, formatter: textCell,
      titleFormatter: header("output (masked)", "what the @mask metrics saw"), headerWordWrap: true });
    columns.push({ title: "masked words", field: "output_style_words", width: 110, formatter: textCell,
      titleFormatter: header("masked words"), headerWordWrap: true });
  }
  for (const name of scores) {
    columns.push({ title: name, field: name, width: 105, hozAlign: "right", sorter: "number", formatter: numberCell,
      titleFormatter: header(name + arrow(name), info[name].signature), headerWordWrap: true });
  }
  const table = new Tabulator("#table", { data: rows, index: "_i", columns: columns, height: "520px",
    nestedFieldSeparator: false, layout: "fitData", placeholder: "no sentence passes the filters" });
  const count = document.getElementById("count");
  table.on("dataFiltered", (filters, shown) => { count.textContent = `${shown.length} of ${data.n} rows`; });
  table.on("rowClick", (event, row) => showCompare(row.getData()));
  let built = false;
  table.on("tableBuilt", () => { built = true; apply(); });

  function apply() {
    if (built) table.setFilter(passes);
    count.textContent = `${rows.filter(passes).length} of ${data.n} rows`;
  }
  for (const [key, select] of Object.entries(selects)) {
    select.addEventListener("change", () => { state[key] = select.value; apply(); });
  }
  const search = document.getElementById("f-search");
  search.addEventListener("input", () => { state.search = search.value.trim(); apply(); });

  const rangeBox = document.getElementById("range-inputs");
  const rangeInputs = [];
  for (const name of scores) {
    const values = R[name].filter((v) => v !== null);
    const lo = values.reduce((a, b) => Math.min(a, b), Infinity), hi = values.reduce((a, b) => Math.max(a, b), -Infinity);
    const line = el("div");
    line.appendChild(el("span", name + arrow(name) + " "));
    const pair = ["min", "max"].map((which) => {
      const input = el("input");
      input.type = "number"; input.step = "any"; input.placeholder = fmt(which === "min" ? lo : hi);
      input.setAttribute("data-metric", name); input.setAttribute("data-bound", which);
      line.appendChild(input); line.appendChild(document.createTextNode(" "));
      rangeInputs.push(input);
      return input;
    });
    const update = () => {
      const [min, max] = pair.map((i) => (i.value === "" ? null : Number(i.value)));
      if (min === null && max === null) delete state.ranges[name]; else state.ranges[name] = { min, max };
      apply();
    };
    pair.forEach((input) => input.addEventListener("input", update));
    rangeBox.appendChild(line);
  }
  document.getElementById("f-reset").addEventListener("click", () => {
    Object.assign(state, { system: "", setting: "", direction: "", search: "", ranges: {} });
    Object.values(selects).forEach((s) => { s.value = ""; });
    search.value = ""; rangeInputs.forEach((i) => { i.value = ""; });
    apply();
  });

  /* ---- one input, every system ---- */
  function maskedNode(masked, words) {
    /* The masked text with each placeholder shown as the word it replaced, highlighted. */
    const span = el("span");
    const parts = String(masked).split(data.placeholder), removed = words ? String(words).split(" ") : [];
    parts.forEach((part, k) => {
      span.appendChild(document.createTextNode(part));
      if (k < parts.length - 1) {
        const mark = el("span", parts.length - 1 === removed.length ? removed[k] : data.placeholder, "masked");
        mark.title = "masked as " + data.placeholder;
        span.appendChild(mark);
      }
    });
    return span;
  }
  function showCompare(chosen) {
    const about = document.getElementById("compare-input");
    about.textContent = "";
    about.appendChild(el("b", `input (item ${chosen.item}, ${chosen.direction}): `));
    about.appendChild(document.createTextNode(chosen.input));
    if (data.masked) {
      about.appendChild(el("br"));
      about.appendChild(el("b", "masked: "));
      about.appendChild(maskedNode(chosen.input_masked, chosen.input_style_words));
    }
    const same = rows.filter((r) => r.input === chosen.input && r.direction === chosen.direction);
    const tbl = el("table"), head = el("tr");
    ["system", "setting", "output", ...(data.masked ? ["output, masked words highlighted"] : []), ...scores]
      .forEach((h) => {
        const th = head.appendChild(el("th"));
        th.appendChild(breakable(scores.includes(h) ? h + arrow(h) : h));
        th.title = h;
      });
    tbl.appendChild(head);
    for (const r of same) {
      const tr = el("tr");
      if (r._i === chosen._i) tr.style.background = "#eef6ff";
      tr.appendChild(el("td", r.system)); tr.appendChild(el("td", r.setting));
      tr.appendChild(el("td", r.output, "wrap"));
      if (data.masked) tr.appendChild(el("td", null, "wrap")).appendChild(maskedNode(r.output_masked, r.output_style_words));
      for (const name of scores) tr.appendChild(el("td", fmt(r[name]), "num"));
      tbl.appendChild(tr);
    }
    const box = document.getElementById("compare");
    box.textContent = "";
    box.appendChild(tbl);
  }

  /* ---- the tradeoff scatter, linked to the table ---- */
  function selectSetting(system, setting, direction) {
    state.system = system; state.setting = setting; state.direction = direction || "";
    selects.system.value = system; selects.setting.value = setting; selects.direction.value = state.direction;
    apply();
  }
  const SYMBOLS = ["circle", "square", "diamond", "triangle-up", "triangle-down", "cross", "x", "star",
    "pentagon", "hexagon", "triangle-left", "triangle-right", "hourglass", "bowtie", "star-diamond", "hexagram"];
  const xSelect = document.getElementById("x-metric"), ySelect = document.getElementById("y-metric");
  for (const select of [xSelect, ySelect]) {
    for (const name of scores) select.appendChild(el("option", name + arrow(name))).value = name;
  }
  xSelect.value = data.tradeoff.x; ySelect.value = data.tradeoff.y;
  /* One direction at a time: systems are compared on the same inputs, never pooled across directions. */
  const dSelect = document.getElementById("t-direction");
  for (const d of unique(R.direction)) dSelect.appendChild(el("option", d)).value = d;

  function means(x, y, direction) {
    /* Mean of x and y per (system, setting) in one direction, over the rows where both are defined. */
    const groups = new Map();
    for (const r of rows) {
      if (r.direction !== direction || r[x] === null || r[y] === null) continue;
      const key = JSON.stringify([r.system, r.setting]);
      const g = groups.get(key) || { system: r.system, setting: r.setting, sx: 0, sy: 0, n: 0,
        hp: data.hyperparameters.map((h) => r[h]).find((v) => v !== "" && Number.isFinite(Number(v))) };
      g.sx += r[x]; g.sy += r[y]; g.n += 1;
      groups.set(key, g);
    }
    return Array.from(groups.values()).map((g) => ({ ...g, x: g.sx / g.n, y: g.sy / g.n }));
  }
  function drawTradeoff() {
    const x = xSelect.value, y = ySelect.value, direction = dSelect.value, points = means(x, y, direction);
    const systems = unique(points.map((p) => p.system));
    const traces = systems.map((system, k) => {
      /* A system's points joined in the order of its (first numeric) hyperparameter, else of the setting.  Names
         go in the legend and settings in the hover text: no always-on labels to overlap or leave the plot. */
      const own = points.filter((p) => p.system === system).sort((a, b) =>
        (a.hp !== undefined && b.hp !== undefined ? Number(a.hp) - Number(b.hp) : 0) ||
        (a.setting < b.setting ? -1 : a.setting > b.setting ? 1 : 0));
      const swept = own.length > 1;
      return { type: "scatter", mode: swept ? "lines+markers" : "markers", name: plotlyText(system),
        x: own.map((p) => p.x), y: own.map((p) => p.y), customdata: own.map((p) => [p.system, p.setting]),
        hovertext: own.map((p) => plotlyText(`${system} / ${p.setting}, ${direction} (n=${p.n})`)),
        hoverinfo: "text+x+y", marker: { symbol: SYMBOLS[k % SYMBOLS.length], size: 10 },
        line: { width: 1.5 } };
    });
    const axis = (name) => ({ title: { text: plotlyText(name + arrow(name)) }, automargin: true,
      autorange: info[name].higher_is_better ? true : "reversed" });
    Plotly.react("tradeoff-plot", traces, { margin: { t: 20, r: 10 }, xaxis: axis(x), yaxis: axis(y),
      legend: { font: { size: 10 } }, hovermode: "closest" }, { displaylogo: false, responsive: true });
  }
  xSelect.addEventListener("change", drawTradeoff);
  ySelect.addEventListener("change", drawTradeoff);
  dSelect.addEventListener("change", drawTradeoff);
  drawTradeoff();
  const tradeoffPlot = document.getElementById("tradeoff-plot");
  tradeoffPlot.on("plotly_click", (event) => {
    const [system, setting] = event.points[0].customdata;
    selectSetting(system, setting, dSelect.value);
    document.getElementById("table").scrollIntoView();
  });

  /* ---- metric x metric correlations ---- */
  const method = document.getElementById("corr-method");
  function drawCorrelations() {
    const labels = scores.map((s) => plotlyText(s + arrow(s)));
    Plotly.react("corr-plot", [{ type: "heatmap", z: data.correlations[method.value], x: labels, y: labels,
      zmin: -1, zmax: 1, colorscale: "RdBu", reversescale: true, texttemplate: "%{z:.2f}",
      hovertemplate: "%{y} × %{x}: %{z:.3f}<extra></extra>" }],
    { margin: { t: 20 }, xaxis: { automargin: true, dtick: 1, tickfont: { size: 9 } },
      yaxis: { autorange: "reversed", automargin: true, dtick: 1, tickfont: { size: 9 } } }, { displaylogo: false, responsive: true });
  }
  method.addEventListener("change", drawCorrelations);
  drawCorrelations();
  document.getElementById("corr-plot").on("plotly_click", (event) => {
    /* A cell sets the tradeoff axes to its pair of metrics. */
    const p = event.points[0];
    xSelect.value = scores[p.pointNumber[1]]; ySelect.value = scores[p.pointNumber[0]];
    drawTradeoff();
  });

  window.tsteval = { data, table, state, passes, selectSetting, showCompare };
})();
