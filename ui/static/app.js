// Maestro Memory's page. Plain JavaScript, no build step, nothing from the network.
// Every piece of memory text reaches the page through textContent or an attribute value set
// by the DOM API: never through innerHTML, so "<script>" in a memory is just text.
"use strict";

const state = { csrf: "", project: "", capabilities: {}, selected: null, overview: null, events: null };

const BANDS = {
  always: "always included",
  relevant: "included when relevant",
  queried: "only when queried",
  flagged: "flagged",
  stale: "not served: a path it names is gone",
  proposed: "proposed: not served until confirmed",
  contradicted: "contradicted",
  archived: "archived",
};
// The agent tools whose own memories are imported (core/toolmem.py TOOLS).
const TOOL_NAMES = { claude: "Claude Code", gemini: "Gemini CLI", codex: "Codex" };

function originText(origin) {
  const cut = origin.indexOf(":");
  const tool = cut < 0 ? origin : origin.slice(0, cut);
  const file = cut < 0 ? "" : origin.slice(cut + 1).split("#")[0];
  return "from " + (TOOL_NAMES[tool] || tool) + "'s memory" + (file ? " (" + file + ")" : "");
}

const CATEGORIES = {
  user_preference: "User preferences",
  architecture_decision: "Architecture decisions",
  quality_rule: "Quality rules",
  project_context: "Project context",
};
const ACTIONS = [["reinforce", "Keep"], ["archive", "Archive"], ["remove", "Remove"]];

// -- small DOM helpers ----------------------------------------------------------------------
function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}
function svg(tag, attrs) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  return node;
}
function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }
function $(id) { return document.getElementById(id); }
function fmt(n, digits) { return typeof n === "number" ? n.toFixed(digits === undefined ? 2 : digits) : "–"; }
function when(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  return isNaN(d) ? String(iso) : d.toLocaleString();
}

function showError(message) {
  const box = $("error");
  box.textContent = message || "";
  box.hidden = !message;
}

// -- the server -------------------------------------------------------------------------------
async function api(path, params) {
  const url = new URL(path, location.origin);
  for (const [k, v] of Object.entries(params || {})) url.searchParams.set(k, v);
  const res = await fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error((body.error && body.error.message) || res.statusText);
  return body;
}
async function post(path, data) {
  const res = await fetch(path, {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRF-Token": state.csrf },
    body: JSON.stringify(Object.assign({ project: state.project }, data)),
  });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error((body.error && body.error.message) || res.statusText);
  return body;
}

// -- entries ------------------------------------------------------------------------------------
function bar(value, max) {
  const outer = el("span", "bar");
  const inner = el("span", "fill");
  inner.style.width = Math.max(0, Math.min(1, value / (max || 1))) * 100 + "%"; // CSSOM, not markup
  outer.appendChild(inner);
  outer.title = fmt(value);
  return outer;
}

function actions(entry, proposal) {
  const box = el("span", "actions");
  if (proposal) {
    // An entry naming a path git saw renamed can be rewritten to the new path (core/evidence.py).
    const offered = proposal.action === "rewrite" ? [["rewrite", "Rewrite path"], ...ACTIONS] : ACTIONS;
    for (const [action, label] of offered) {
      const b = el("button", action === proposal.action ? "proposed" : "", label);
      b.type = "button";
      b.dataset.action = action;
      b.addEventListener("click", () => decide(entry.id, action));
      box.appendChild(b);
    }
  }
  if (state.capabilities.forget) {
    const b = el("button", "forget", "Forget");
    b.type = "button";
    b.dataset.action = "forget";
    b.addEventListener("click", () => forget(entry.id));
    box.appendChild(b);
  }
  return box;
}

function entryItem(entry, extra) {
  const li = el("li", "entry " + (entry.state || ""));
  li.dataset.id = entry.id;
  if (state.selected === entry.id) li.classList.add("selected");
  const text = el("p", "text", entry.text);
  const meta = el("div", "meta");
  if (entry.sector === "semantic" || entry.band === "archived") {
    meta.appendChild(bar(entry.confidence, 1));
    meta.appendChild(el("span", "num", fmt(entry.confidence)));
    meta.appendChild(el("span", "band " + entry.band, BANDS[entry.band] || entry.band));
  } else {
    meta.appendChild(el("span", "label", "salience"));
    meta.appendChild(bar(entry.salience, 2));
    meta.appendChild(el("span", "num", fmt(entry.salience, 3)));
    meta.appendChild(el("span", "label", "confidence"));
    meta.appendChild(bar(entry.confidence, 1));
    meta.appendChild(el("span", "num", fmt(entry.confidence, 3)));
  }
  const facts = el("div", "facts");
  facts.appendChild(el("span", "", entry.date));
  if (entry.sector === "episodic" && entry.session_id) facts.appendChild(el("span", "", "session " + entry.session_id));
  if (entry.sector === "semantic" && entry.category && extra && extra.showCategory) {
    facts.appendChild(el("span", "", CATEGORIES[entry.category] || entry.category));
  }
  const since = entry.unreinforced_sessions;
  if (entry.last_reinforced) facts.appendChild(el("span", "", "reinforced " + when(entry.last_reinforced)));
  else if (entry.sector === "semantic" && typeof since === "number") {
    facts.appendChild(el("span", "", since === 0 ? "reinforced since last decay" : since + " session" + (since === 1 ? "" : "s") + " without reinforcement"));
  }
  if (entry.state && entry.state !== "active") facts.appendChild(el("span", "state", entry.state));
  if (entry.stale) facts.appendChild(el("span", "stale-reason", entry.stale));
  if (entry.origin) {
    const origin = el("span", "origin", originText(entry.origin));
    origin.title = entry.origin;
    facts.appendChild(origin);
  }
  if (extra && extra.score !== undefined) facts.appendChild(el("span", "", "score " + fmt(extra.score)));
  facts.appendChild(el("span", "id", entry.id));
  li.append(text, meta, facts);
  if (extra && extra.reason) li.appendChild(el("p", "reason", extra.reason));
  if (!(extra && extra.noActions)) li.appendChild(actions(entry, extra && extra.proposal));
  li.addEventListener("click", (ev) => {
    if (ev.target instanceof HTMLButtonElement) return;
    select(entry.id);
  });
  return li;
}

function renderSemantic(entries, proposals) {
  const root = $("semantic");
  clear(root);
  $("semantic-count").textContent = String(entries.length);
  if (!entries.length) { root.appendChild(el("p", "empty", "No semantic entries yet.")); return; }
  const groups = new Map();
  for (const e of entries) {
    const key = e.category || "other";
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(e);
  }
  for (const [key, items] of groups) {
    const section = el("div", "category");
    section.appendChild(el("h3", "", CATEGORIES[key] || key));
    const list = el("ol", "entries");
    for (const e of items) list.appendChild(entryItem(e, { proposal: proposals.get(e.id) }));
    section.appendChild(list);
    root.appendChild(section);
  }
}

function renderEpisodic(entries, proposals) {
  const root = $("episodic");
  clear(root);
  $("episodic-count").textContent = String(entries.length);
  if (!entries.length) root.appendChild(el("li", "empty", "No episodic entries yet."));
  for (const e of entries) root.appendChild(entryItem(e, { proposal: proposals.get(e.id) }));
}

function renderReview(proposals) {
  const root = $("review");
  clear(root);
  $("review-count").textContent = String(proposals.length);
  if (!proposals.length) root.appendChild(el("li", "empty", "Nothing to review: no entry is flagged."));
  for (const p of proposals) {
    const entry = Object.assign({}, p.entry, { band: p.entry.sector === "semantic" ? (p.entry.stale ? "stale" : p.entry.proposed ? "proposed" : "flagged") : undefined });
    root.appendChild(entryItem(entry, { proposal: p, reason: "Proposed: " + p.action + " (" + p.reason + ")" }));
  }
}

function renderArchive(entries) {
  const root = $("archive");
  clear(root);
  $("archive-count").textContent = String(entries.length);
  if (!entries.length) root.appendChild(el("li", "empty", "The archive is empty."));
  for (const e of entries) root.appendChild(entryItem(e, { noActions: true, showCategory: true }));
}

function renderContext(ctx) {
  $("context").textContent = ctx.text || "(empty: an agent gets no memory block now)";
  $("tokens").textContent = ctx.tokens + " / " + ctx.budget + " tokens";
}

function render(data) {
  state.overview = data;
  const proposals = new Map((data.review || []).map((p) => [p.entry.id, p]));
  renderSemantic(data.semantic || [], proposals);
  renderEpisodic(data.episodic || [], proposals);
  renderReview(data.review || []);
  renderArchive(data.archive || []);
  renderContext(data.context || { text: "", tokens: 0, budget: 0 });
  $("via").textContent = data.via === "daemon" ? "via maestrod" : "direct (no daemon)";
  const all = (data.semantic || []).concat(data.episodic || []);
  if (!state.selected || !all.some((e) => e.id === state.selected)) {
    state.selected = all.length ? all[0].id : null;
  }
  markSelected();
}

// -- chart -------------------------------------------------------------------------------------
function markSelected() {
  for (const li of document.querySelectorAll("li.entry")) li.classList.toggle("selected", li.dataset.id === state.selected);
  drawChart();
}
function select(id) { state.selected = id; markSelected(); }

function findEntry(id) {
  const o = state.overview || {};
  return (o.semantic || []).concat(o.episodic || []).find((e) => e.id === id);
}

async function drawChart() {
  const box = $("chart");
  const id = state.selected;
  const entry = id && findEntry(id);
  $("chart-title").textContent = entry ? entry.text.slice(0, 60) + (entry.text.length > 60 ? "…" : "") : "";
  if (!entry) { clear(box); box.appendChild(el("p", "empty", "Select an entry to see its history.")); return; }
  let points = [];
  try {
    points = (await api("/api/history", { project: state.project, id })).points || [];
  } catch (err) { showError(err.message); }
  if (state.selected !== id) return; // another entry was selected meanwhile
  const series = points.filter((p) => p.confidence !== null).map((p) => ({ t: new Date(p.time).getTime(), c: p.confidence, s: p.salience, op: p.op }));
  series.push({ t: Date.now(), c: entry.confidence, s: entry.salience, op: "now" });
  if (series.length === 1) series.unshift(Object.assign({}, series[0], { t: series[0].t - 3600e3 })); // a visible flat line
  clear(box);
  box.appendChild(chartSvg(series, entry.sector === "episodic"));
  const note = points.length ? points.length + " change" + (points.length === 1 ? "" : "s") + " in the journal" : "No history yet: maestrod journals every change while it runs.";
  box.appendChild(el("p", "muted small", note));
}

function chartSvg(series, withSalience) {
  const W = 420, H = 190, L = 34, R = withSalience ? 34 : 10, T = 10, B = 26;
  const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "plot", role: "img", "aria-label": "confidence over time" });
  // One step per journalled change (sessions are days apart, writes seconds apart: a time
  // axis would squash every step into one corner); the dates are on the tooltips and the ends.
  series.forEach((p, i) => { p.i = i; });
  const t0 = series[0].t;
  const x = (i) => L + (i / Math.max(series.length - 1, 1)) * (W - L - R);
  const y = (v, max) => T + (1 - v / max) * (H - T - B);
  for (const [v, label] of [[0.7, "0.7"], [0.4, "0.4"], [0.2, "0.2"]]) {
    root.appendChild(svg("line", { x1: L, x2: W - R, y1: y(v, 1), y2: y(v, 1), class: "threshold" }));
    const t = svg("text", { x: L - 4, y: y(v, 1) + 3, class: "tick", "text-anchor": "end" });
    t.textContent = label;
    root.appendChild(t);
  }
  for (const [v, label] of [[0, "0"], [1, "1"]]) {
    const t = svg("text", { x: L - 4, y: y(v, 1) + 3, class: "tick", "text-anchor": "end" });
    t.textContent = label;
    root.appendChild(t);
  }
  root.appendChild(svg("line", { x1: L, x2: W - R, y1: y(0, 1), y2: y(0, 1), class: "axis" }));
  if (withSalience) {
    const t = svg("text", { x: W - R + 4, y: y(2, 2) + 3, class: "tick salience-tick" });
    t.textContent = "2";
    root.appendChild(t);
  }
  const step = (key, max) => {
    let d = "";
    series.forEach((p, i) => {
      const v = p[key];
      if (typeof v !== "number") return;
      d += (d ? ` H${x(p.i).toFixed(1)} V${y(v, max).toFixed(1)}` : `M${x(p.i).toFixed(1)} ${y(v, max).toFixed(1)}`);
    });
    return d;
  };
  if (withSalience) root.appendChild(svg("path", { d: step("s", 2), class: "line salience" }));
  root.appendChild(svg("path", { d: step("c", 1), class: "line confidence" }));
  for (const p of series) {
    const dot = svg("circle", { cx: x(p.i), cy: y(p.c, 1), r: 3, class: "dot" });
    const tip = svg("title");
    tip.textContent = `${p.op}: confidence ${fmt(p.c)}${typeof p.s === "number" ? ", salience " + fmt(p.s, 3) : ""} (${new Date(p.t).toLocaleString()})`;
    dot.appendChild(tip);
    root.appendChild(dot);
  }
  const first = svg("text", { x: L, y: H - 6, class: "tick" });
  first.textContent = new Date(t0).toLocaleDateString();
  const last = svg("text", { x: W - R, y: H - 6, class: "tick", "text-anchor": "end" });
  last.textContent = "now";
  root.append(first, last);
  const key = svg("text", { x: W - R, y: T + 8, class: "tick key", "text-anchor": "end" });
  key.textContent = withSalience ? "— confidence   — salience (0–2)" : "— confidence";
  root.appendChild(key);
  return root;
}

// -- actions -----------------------------------------------------------------------------------
async function decide(id, action) {
  try {
    await post("/api/review", { id, action });
    showError("");
    await refresh();
  } catch (err) { showError(err.message); }
}
async function forget(id) {
  try {
    await post("/api/forget", { id });
    showError("");
    await refresh();
  } catch (err) { showError(err.message); }
}

// -- search ------------------------------------------------------------------------------------
let searchTimer = 0;
async function runSearch() {
  const q = $("search").value.trim();
  const section = $("search-section");
  if (!q) { section.hidden = true; return; }
  try {
    const data = await api("/api/search", { project: state.project, q });
    if ($("search").value.trim() !== q) return; // typed on meanwhile
    const list = $("results");
    clear(list);
    $("search-count").textContent = data.results.length + " for “" + q + "”";
    if (!data.results.length) list.appendChild(el("li", "empty", "No entry matches."));
    for (const r of data.results) list.appendChild(entryItem(r.entry, { score: r.score, noActions: true, showCategory: true }));
    section.hidden = false;
  } catch (err) { showError(err.message); }
}

// -- loading and live updates -----------------------------------------------------------------
async function refresh() {
  try {
    render(await api("/api/overview", { project: state.project }));
    if ($("search").value.trim()) await runSearch();
    showError("");
  } catch (err) { showError(err.message); }
}

function listen() {
  if (state.events) state.events.close();
  const live = $("live");
  const source = new EventSource("/api/events?project=" + encodeURIComponent(state.project));
  state.events = source;
  source.addEventListener("hello", () => { live.textContent = "live"; live.className = "pill live"; });
  source.addEventListener("change", () => refresh());
  source.onerror = () => { live.textContent = "reconnecting…"; live.className = "pill"; };
}

async function switchProject(project) {
  state.project = project;
  state.selected = null;
  await refresh();
  listen();
}

async function start() {
  let session;
  try {
    session = await api("/api/session");
  } catch (err) {
    showError(err.message);
    return;
  }
  state.csrf = session.csrf;
  state.capabilities = session.capabilities || {};
  const picker = $("project");
  for (const p of session.projects) {
    const opt = el("option", "", p.split("/").pop() + "  ·  " + p);
    opt.value = p;
    picker.appendChild(opt);
  }
  picker.value = session.project;
  picker.addEventListener("change", () => switchProject(picker.value));
  $("search").addEventListener("input", () => { clearTimeout(searchTimer); searchTimer = setTimeout(runSearch, 150); });
  await switchProject(session.project);
  document.body.dataset.ready = "1";
}

document.addEventListener("DOMContentLoaded", start);
