// The agent-memory console: plain JavaScript, no libraries, no build step. Every action is a call
// to /console/api/ with the bearer token, which the server checks like an MCP request. The token is
// kept in the variable `bearer` only: never in storage, cookies or the URL (a reload signs out).
"use strict";

const API = "api";
const LEGACY_KEY = "agent-memory-console-token";  // where older pages kept the token: cleared on load
let bearer = null;
const main = document.getElementById("main");
const statusLine = document.getElementById("status");
let me = null;
let metricsTimer = null;
let statusTimer = null;
const samples = [];
const SAMPLE_SECONDS = 5;

// -- helpers ---------------------------------------------------------------------------------

function h(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

// The status bar: shown only while it has a message, in plain words. A notice fades after a few
// seconds; an error stays until dismissed (or the next message). Either can be dismissed with ×.
function say(text, isError) {
  clearTimeout(statusTimer);
  if (!text) {
    statusLine.replaceChildren();
    statusLine.hidden = true;
    statusLine.className = "";
    return;
  }
  statusLine.replaceChildren(h("span", { id: "status-text" }, text),
    h("button", { type: "button", id: "status-dismiss", "aria-label": "dismiss", title: "dismiss",
      onclick: () => say("") }, "×"));
  statusLine.className = isError ? "error" : "";
  statusLine.hidden = false;
  if (!isError) {
    statusTimer = setTimeout(() => {
      statusLine.className = "fading";
      statusTimer = setTimeout(() => say(""), 600);
    }, 5000);
  }
}

// "2026-11-26T01:07:12.123456+00:00" as "2026-11-26 01:07" (the full value in its tooltip)
function when(value) {
  if (!value) return "";
  const text = String(value);
  const short = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/.test(text) ? text.slice(0, 10) + " " + text.slice(11, 16) : text;
  return h("time", { class: "when", datetime: text, title: text }, short);
}

function show(...nodes) {
  main.replaceChildren(...nodes.flat(2).filter((n) => n !== null && n !== undefined && n !== false));
}

async function call(method, path, body) {
  const options = { method, headers: { Authorization: "Bearer " + bearer } };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  const response = await fetch(API + path, options);
  const data = await response.json().catch(() => ({ code: "INTERNAL", message: "unreadable answer" }));
  if (response.status === 401) {
    bearer = null;
    signInPage(data.message);
    throw new Error(data.message);
  }
  if (!response.ok) {
    const error = new Error(data.message || data.code);  // in plain words; the code stays in error.data
    error.data = data;
    throw error;
  }
  return data;
}

function query(params) {
  const parts = Object.entries(params).filter(([, v]) => v !== "" && v !== null && v !== undefined)
    .map(([k, v]) => encodeURIComponent(k) + "=" + encodeURIComponent(v));
  return parts.length ? "?" + parts.join("&") : "";
}

function select(name, values, current, anyLabel = "any") {  // anyLabel null: one of `values` must be chosen
  return h("select", { name }, anyLabel === null ? null : h("option", { value: "" }, anyLabel),
    values.map((v) => h("option", { value: v, selected: v === current }, v)));
}

function field(label, control) {
  return h("label", {}, label, control);
}

function tags(list) {
  return list.map((t) => h("span", { class: "tag" }, t));
}

function flags(e) {
  return [e.conflict ? h("span", { class: "flag" }, "conflict ") : null,
    e.superseded_by ? h("span", { class: "flag" }, "superseded ") : null,
    e.compacted ? h("span", { class: "muted" }, "compacted") : null];
}

function entryLink(id, short) {  // short: "mem_…AMJ992Z5K2" (an id's random tail; the whole id in its tooltip)
  const text = short && id.length > 16 ? id.slice(0, id.indexOf("_") + 1) + "…" + id.slice(-10) : id;
  return h("a", { href: "#/entry/" + encodeURIComponent(id), class: "entry-link", "data-id": id, title: id }, text);
}

async function guarded(work) {
  try {
    if (statusLine.className === "error") say("");  // a notice fades by itself (and outlives a page change)
    await work();
  } catch (error) {
    say(error.message, true);
  }
}

// -- sign in ---------------------------------------------------------------------------------

function signInPage(reason) {
  me = null;
  document.getElementById("nav").hidden = true;
  document.getElementById("sign-out").hidden = true;
  document.getElementById("who").textContent = "";
  const input = h("textarea", { id: "token-input", placeholder: "am1.…", rows: 3 });
  show(h("h2", {}, "Sign in"),
    h("p", {}, "Paste a bearer token (agent-memory token issue …, or --operator for every scope). Started with " +
      "agent-memory console? Press Enter in its terminal for a new one-time sign-in URL."),
    reason ? h("p", { class: "error" }, reason) : null,
    input,
    h("p", {}, h("button", { id: "sign-in", onclick: () => signIn(input.value.trim()) }, "Sign in")));
}

async function signIn(token) {
  if (!token) return say("paste a token first", true);
  bearer = token;
  await guarded(async () => {
    me = await call("GET", "/whoami");
    document.getElementById("nav").hidden = false;
    document.getElementById("sign-out").hidden = false;
    document.getElementById("nav-warnings").hidden = !me.operator;
    document.getElementById("who").textContent = `${me.operator ? "OPERATOR " : ""}${me.agent_id} · ` +
      `${me.system_type} · team ${me.team}`;
    route();
  });
}

// `agent-memory console` prints a URL with a one-time code in its fragment: traded here for an
// operator session token (the code is then worthless, wherever the URL was kept).
async function exchange(code) {
  say("signing in…");
  try {
    const response = await fetch(API + "/session", { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ code }) });
    const data = await response.json().catch(() => ({ message: "unreadable answer" }));
    say("");
    if (!response.ok) return signInPage(data.message);
    await signIn(data.token);
  } catch (error) {
    say("");
    signInPage(error.message);
  }
}

document.getElementById("sign-out").addEventListener("click", () => {
  bearer = null;
  location.hash = "";
  signInPage("signed out");
});

// -- browse ----------------------------------------------------------------------------------

async function browsePage(params) {
  const form = h("form", { class: "filters", id: "filters" },
    field("scope", select("scope", ["agent", "team", "global"], params.scope)),
    field("namespace (and below)", h("input", { name: "namespace", value: params.namespace || "" })),
    field("layer", select("layer", ["working", "session", "long_term", "meta"], params.layer)),
    field("tags (all of)", h("input", { name: "tags", value: params.tags || "" })),
    field("source", select("source", ["manual", "reflection", "tool", "import"], params.source)),
    field("domain", select("domain", ["user_pref", "system_fact", "session_summary", "agent_eval", "code_context"],
      params.domain)),
    field("conflict", select("conflict", ["true", "false"], params.conflict)),
    field("superseded", select("superseded", ["true", "false"], params.superseded)),
    h("button", { type: "submit", id: "apply-filters" }, "Apply"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    location.hash = "#/browse" + query(Object.fromEntries(new FormData(form)));
  });
  const body = h("tbody", { id: "entries" });
  const more = h("button", { id: "more", hidden: true }, "More");
  show(h("h2", {}, "Browse"), form, h("table", { id: "browse-table" },
    h("thead", {}, h("tr", {}, ["id", "scope", "namespace", "layer", "domain", "tags", "source", "updated", "",
      "content"]
      .map((t) => h("th", { class: t === "content" ? "content-col" : null }, t)))), body), h("p", {}, more));
  let cursor = null;
  async function load() {
    const page = await call("GET", "/entries" + query({ ...params, cursor }));
    for (const e of page.items) {
      body.append(h("tr", { "data-id": e.id }, h("td", { class: "nowrap" }, entryLink(e.id, true)),
        h("td", {}, e.scope),
        h("td", {}, e.namespace), h("td", {}, e.layer), h("td", {}, e.domain || ""), h("td", {}, tags(e.tags)),
        h("td", {}, e.source),
        h("td", { class: "nowrap" }, when(e.updated_at)), h("td", {}, flags(e)),
        h("td", { class: "content-col" }, e.content.slice(0, 160))));
    }
    if (!page.items.length && !cursor) body.append(h("tr", {}, h("td", { colspan: 10 }, "nothing here")));
    cursor = page.next_cursor;
    more.hidden = !page.has_more;
  }
  more.addEventListener("click", () => guarded(load));
  await load();
}

// -- one entry -------------------------------------------------------------------------------

async function entryPage(id) {
  const data = await call("GET", "/entries/" + encodeURIComponent(id));
  const e = data.entry;
  const meta = h("table", { id: "entry-meta" }, ["id", "scope", "namespace", "team", "owner_agent_id", "layer",
    "priority", "source", "confidence", "domain", "tags", "created_at", "updated_at", "expires_at", "version", "etag",
    "conflict", "conflict_of", "superseded_by", "promoted_from", "session_id"]
    .map((k) => h("tr", {}, h("th", {}, k), h("td", { "data-field": k },
      k === "tags" ? tags(e.tags) : (k === "conflict_of" || k === "superseded_by" || k === "promoted_from") &&
        e[k] ? entryLink(e[k]) : e[k] === null ? "" : String(e[k])))));
  const content = h("textarea", { id: "edit-content" }, e.content);
  const tagInput = h("input", { id: "edit-tags", value: e.tags.join(", ") });
  const priority = h("select", { id: "edit-priority" },
    ["low", "medium", "high"].map((p) => h("option", { selected: p === e.priority }, p)));
  const confidence = h("input", { id: "edit-confidence", type: "number", min: 0, max: 1, step: 0.05,
    value: e.confidence });
  const save = h("button", { id: "save", onclick: () => guarded(async () => {
    const changed = { if_match: e.etag, content: content.value, priority: priority.value,
      confidence: Number(confidence.value),
      tags: tagInput.value.split(",").map((t) => t.trim()).filter(Boolean) };
    try {
      await call("PATCH", "/entries/" + encodeURIComponent(e.id), changed);
      await entryPage(e.id);
      say("Saved.");
    } catch (error) {
      const d = (error.data || {}).details || {};
      if (d.conflict_id) {
        say("Someone changed this entry first: your edit was kept as a conflict to reconcile (see Conflicts).", true);
      } else throw error;
    }
  }) }, "Save");
  const del = h("button", { id: "delete", onclick: () => {
    del.replaceWith(h("button", { id: "confirm-delete", onclick: () => guarded(async () => {
      await call("DELETE", "/entries/" + encodeURIComponent(e.id) + query({ if_match: e.etag }));
      location.hash = "#/browse";
      say("Entry deleted.");
    }) }, "Really delete " + e.id + "?"));
  } }, "Delete");
  const editable = !e.conflict;
  show(h("h2", {}, "Entry ", e.id), meta, historySection(e, data.supersedes || []),
    h("h2", {}, "Content"),
    editable ? h("div", {}, content, h("form", { class: "row", onsubmit: (ev) => ev.preventDefault() },
      field("tags (comma-separated)", tagInput), field("priority", priority), field("confidence", confidence),
      save, del))
      : h("div", {}, h("pre", { class: "content" }, e.content),
        h("p", {}, "A conflict entry: reconcile it in ", h("a", { href: "#/conflicts" }, "Conflicts"), ". "), del),
    h("h2", {}, "Audit trail"),
    h("table", { id: "audit" }, h("thead", {}, h("tr", {}, ["at", "agent", "tool", "action", "outcome", "details"]
      .map((t) => h("th", {}, t)))),
    h("tbody", {}, data.audit.map((row) => h("tr", { class: "audit-row" }, h("td", { class: "nowrap" }, when(row.at)),
      h("td", {}, `${row.agent_id} (${row.system_type}, ${row.team})`), h("td", {}, row.tool),
      h("td", {}, row.action), h("td", {}, row.outcome), h("td", {}, JSON.stringify(row.details)))))));
}

// An entry's supersede history: the later fact that replaced it (with an undo button, which runs
// memory_crud unsupersede with the etag shown) and the facts it replaced itself.
function historySection(e, replaced) {
  const rows = [];
  if (e.superseded_by) {
    const undo = h("button", { id: "unsupersede", onclick: () => guarded(async () => {
      await call("POST", "/entries/" + encodeURIComponent(e.id) + "/unsupersede", { if_match: e.etag });
      await entryPage(e.id);
      say("This fact is current again (the fact that replaced it stays current too).");
    }) }, "Undo: make this fact current again");
    rows.push(h("p", { id: "replaced-by" }, "Replaced by ", entryLink(e.superseded_by),
      ": this fact is kept but left out of retrieval. ", undo));
  }
  if (replaced.length) {
    rows.push(h("p", {}, "This fact replaced:"), h("ul", { id: "replaces" }, replaced.map((old) =>
      h("li", {}, entryLink(old.id), " of ", old.created_at))));
  }
  if (!rows.length) return null;
  return h("div", { id: "history" }, h("h2", {}, "History"), rows);
}

// -- search ----------------------------------------------------------------------------------

async function searchPage(params) {
  const form = h("form", { class: "filters", id: "search-form" },
    field("query", h("input", { name: "q", id: "search-q", value: params.q || "", size: 40 })),
    field("mode", select("mode", ["hybrid", "semantic", "keyword"], params.mode || "hybrid", null)),
    field("scope", select("scope", ["agent", "team", "global"], params.scope)),
    field("min score", h("input", { name: "min_score", value: params.min_score || "", size: 4 })),
    h("button", { type: "submit" }, "Search"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    location.hash = "#/search" + query(Object.fromEntries(new FormData(form)));
  });
  show(h("h2", {}, "Search (memory_retrieve)"), form);
  if (!params.q) return;
  const result = await call("GET", "/search" + query(params));
  const partNames = result.items.length ? Object.keys(result.items[0].score_parts) : [];
  main.append(h("p", { class: "muted" }, `${result.items.length} found · ${result.used_chars}/${result.budget_chars}` +
      ` chars injected · dropped ${result.dropped}` + (result.degraded ? " · degraded: " + result.degraded : "")),
    h("table", { id: "results" }, h("thead", {}, h("tr", {}, ["id", "score", ...partNames, "content"]
      .map((t) => h("th", {}, t)))),
    h("tbody", {}, result.items.map((item) => h("tr", {}, h("td", {}, entryLink(item.id)),
      h("td", {}, item.score.toFixed(3)), partNames.map((p) => h("td", {}, Number(item.score_parts[p]).toFixed(3))),
      h("td", {}, item.content))))),
    h("h2", {}, "Injected context"), h("pre", { class: "content" }, result.context));
}

// -- conflicts -------------------------------------------------------------------------------

function side(title, e) {
  if (!e) return h("div", {}, h("h3", {}, title), h("p", { class: "muted" }, "the original is gone"));
  return h("div", {}, h("h3", {}, title, " ", entryLink(e.id)),
    h("div", { class: "muted" }, `v${e.version} · ${e.owner_agent_id} · `, when(e.updated_at),
      ` · ${e.priority} · confidence ${e.confidence}`), tags(e.tags), h("pre", {}, e.content));
}

const RESOLVED = {
  keep_original: "Conflict resolved: kept the original.",
  take_this: "Conflict resolved: kept this version.",
  merge: "Conflict resolved: saved the merged text.",
};

async function conflictsPage() {
  const page = await call("GET", "/conflicts");
  show(h("h2", {}, "Conflict queue"), page.items.length ? null : h("p", { id: "no-conflicts" }, "No conflicts."),
    page.items.map(({ conflict, original }) => {
      const resolve = (choice, content) => guarded(async () => {
        await call("POST", "/conflicts/" + encodeURIComponent(conflict.id) + "/resolve",
          { choice, original_etag: original ? original.etag : "", content });
        await conflictsPage();
        say(RESOLVED[choice] || "Conflict resolved.");
      });
      const actions = h("div", { class: "actions" });
      const mergeBox = h("div", { class: "actions" });
      if (original) {
        actions.append(
          h("button", { class: "keep", onclick: () => resolve("keep_original") }, "Keep original"),
          h("button", { class: "take", onclick: () => resolve("take_this") }, "Take this"),
          h("button", { class: "merge", onclick: () => {
            const text = h("textarea", { class: "merge-text" }, original.content + "\n" + conflict.content);
            mergeBox.replaceChildren(text, h("button", { class: "save-merge",
              onclick: () => resolve("merge", text.value) }, "Save merged"));
          } }, "Merge by editing"));
      } else {
        actions.append(h("button", { class: "discard", onclick: () => guarded(async () => {
          await call("DELETE", "/entries/" + encodeURIComponent(conflict.id) + query({ if_match: conflict.etag }));
          await conflictsPage();
          say("Conflict discarded.");
        }) }, "Discard conflict"));
      }
      return h("div", { class: "pair", "data-conflict": conflict.id }, side("Original", original),
        side("Conflicting change", conflict), actions, mergeBox);
    }));
}

// -- metrics ---------------------------------------------------------------------------------

const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attrs, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  for (const c of children) {
    if (c !== null && c !== undefined) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

function barChart(title, rows, unit) {  // rows: [label, [values...]]; series colours in order
  const colours = ["#3b82f6", "#f59e0b", "#ef4444"];
  const width = 360;
  const rowHeight = 18 * Math.max(1, rows[0] ? rows[0][1].length : 1) + 8;
  const max = Math.max(1e-9, ...rows.flatMap(([, vs]) => vs));
  const chart = svg("svg", { width, height: rows.length * rowHeight + 10, role: "img" });
  rows.forEach(([label, values], i) => {
    const y = i * rowHeight + 4;
    chart.append(svg("text", { x: 0, y: y + 13, "font-size": 11 }, label));
    values.forEach((v, j) => {
      const w = Math.max(1, (v / max) * (width - 190));
      chart.append(svg("rect", { x: 120, y: y + j * 18, width: w, height: 14, fill: colours[j % 3] }),
        svg("text", { x: 124 + w, y: y + j * 18 + 11, "font-size": 10 }, `${v}${unit}`));
    });
  });
  return h("div", { class: "chart" }, h("strong", {}, title), h("br"), chart);
}

// A line over the samples taken while the page is open, scaled from their least to their greatest
// value (so a change of one shows), with that scale and the time span on its axes; "no data yet"
// until there are two samples to join.
function sparkline(title, values, id) {
  const width = 360;
  const height = 80;
  const left = 44;
  const bottom = 16;
  const box = h("div", { class: "chart", id }, h("strong", {}, title));
  if (values.length < 2) {
    box.append(h("p", { class: "muted no-data" },
      `no data yet: a point every ${SAMPLE_SECONDS} s while this page is open`));
    return box;
  }
  const low = Math.min(...values);
  const high = Math.max(...values);
  const span = high - low || 1;
  const plotW = width - left - 4;
  const plotH = height - bottom - 8;
  const step = plotW / (values.length - 1);
  const y = (v) => (high === low ? 4 + plotH / 2 : 4 + plotH - ((v - low) / span) * plotH).toFixed(1);
  const points = values.map((v, i) => `${(left + i * step).toFixed(1)},${y(v)}`);
  const chart = svg("svg", { width, height, role: "img", class: "line" },
    svg("line", { x1: left, y1: 4, x2: left, y2: 4 + plotH, stroke: "#9aa5b1" }),
    svg("line", { x1: left, y1: 4 + plotH, x2: width - 4, y2: 4 + plotH, stroke: "#9aa5b1" }),
    high === low
      ? svg("text", { x: left - 4, y: 8 + plotH / 2, "font-size": 10, "text-anchor": "end", class: "axis-max" }, high)
      : svg("text", { x: left - 4, y: 12, "font-size": 10, "text-anchor": "end", class: "axis-max" }, high),
    high === low ? null
      : svg("text", { x: left - 4, y: 4 + plotH, "font-size": 10, "text-anchor": "end", class: "axis-min" }, low),
    svg("text", { x: left, y: height - 2, "font-size": 10 }, `${(values.length - 1) * SAMPLE_SECONDS} s ago`),
    svg("text", { x: width - 4, y: height - 2, "font-size": 10, "text-anchor": "end" }, "now"),
    svg("polyline", { points: points.join(" "), fill: "none", stroke: "#3b82f6", "stroke-width": 2 }));
  box.append(h("span", { class: "muted" }, ` now ${values[values.length - 1]}` +
    (high === low ? " (unchanged)" : `, ranged ${low}–${high}`)), h("br"), chart,
    h("div", { class: "muted last-values" }, "last values: " + values.slice(-6).join(", ")));
  return box;
}

function percent(rate) {
  return `${(Number(rate) * 100).toFixed(Number(rate) * 100 % 1 ? 1 : 0)}%`;
}

async function metricsPage() {
  const data = await call("GET", "/metrics");
  const tools = Object.entries(data.tools.tools);
  const calls = tools.reduce((n, [, t]) => n + t.calls, 0);
  samples.push({ calls, backlog: data.store.vector_outbox_backlog });
  if (samples.length > 60) samples.shift();
  const r = data.retrieval;
  const hits = Math.round(r.hit_rate * r.retrievals);
  show(h("h2", {}, "Metrics"),
    h("table", { id: "metrics-summary" }, [
      ["tool calls (every memory_* tool, over MCP and from this console)", calls],
      ["retrievals (memory_retrieve runs, console searches included)", r.retrievals],
      ["retrieval hit rate (retrievals that found at least one entry)",
        r.retrievals ? `${percent(r.hit_rate)} (${hits} of ${r.retrievals})` : "no retrievals yet"],
      ["mean injected chars (per retrieval)", r.mean_injected_chars],
      ["vector outbox backlog (entries waiting for their vectors)", data.store.vector_outbox_backlog],
      ["entries (you may read)", data.store.entries], ["pending conflicts", data.store.conflicts]]
      .map(([k, v]) => h("tr", {}, h("th", {}, k), h("td", {}, v)))),
    h("div", { class: "charts" },
      barChart("calls per tool", tools.map(([name, t]) => [name, [t.calls]]), ""),
      barChart("latency p50 / p95 / p99", tools.map(([name, t]) =>
        [name, [t.latency_ms.p50, t.latency_ms.p95, t.latency_ms.p99]]), " ms"),
      barChart("entries by scope", Object.entries(data.store.by_scope).map(([k, v]) => [k, [v]]), ""),
      sparkline(`tool calls since start (sampled every ${SAMPLE_SECONDS} s on this page)`,
        samples.map((p) => p.calls), "spark-calls"),
      sparkline("vector outbox backlog", samples.map((p) => p.backlog), "spark-backlog")),
    h("p", { class: "muted" }, "Counters are this server process's since it started."));
  metricsTimer = setTimeout(() => guarded(metricsPage), SAMPLE_SECONDS * 1000);
}

// -- warnings --------------------------------------------------------------------------------

const LINE_KEYS = new Set(["timestamp", "level", "event", "logger"]);

function fieldText(value) {
  return typeof value === "string" ? value : JSON.stringify(value);
}

async function warningsPage() {
  const data = await call("GET", "/warnings");
  show(h("h2", {}, "Warnings ", h("span", { class: "muted" }, data.since ? "new since " + data.since : "all kept")),
    data.summary.length ? h("table", { id: "warnings" }, h("tr", {}, ["count", "level", "event", "last"]
      .map((t) => h("th", {}, t))), data.summary.map((s) => h("tr", {}, h("td", {}, s.count), h("td", {}, s.level),
      h("td", {}, s.event), h("td", { class: "nowrap" }, when(s.last))))) : h("p", {}, "No new warnings."),
    h("h2", {}, "Latest"),
    data.latest.length ? h("table", { id: "warning-lines" },
      h("thead", {}, h("tr", {}, ["time", "level", "event", "details"].map((t) => h("th", {}, t)))),
      h("tbody", {}, data.latest.slice().reverse().map((line) => h("tr", { class: "warning-line" },
        h("td", { class: "nowrap" }, when(line.timestamp)),
        h("td", { class: "level-" + String(line.level || "").toLowerCase() }, line.level || ""),
        h("td", {}, line.event || ""),
        h("td", {}, h("dl", { class: "fields" }, Object.entries(line).filter(([k]) => !LINE_KEYS.has(k))
          .flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, fieldText(v))]))))))) : h("p", { class: "muted" }, "none"));
}

// -- routing ---------------------------------------------------------------------------------

function route() {
  if (!me) return;
  clearTimeout(metricsTimer);
  const [path, search] = (location.hash.slice(1) || "/browse").split("?");
  const params = Object.fromEntries(new URLSearchParams(search || ""));
  const parts = path.split("/").filter(Boolean);
  const pages = {
    browse: () => browsePage(params),
    entry: () => entryPage(decodeURIComponent(parts[1] || "")),
    search: () => searchPage(params),
    conflicts: () => conflictsPage(),
    metrics: () => metricsPage(),
    warnings: () => warningsPage(),
  };
  guarded(pages[parts[0]] || pages.browse);
}

window.addEventListener("hashchange", route);

// A sign-in fragment without its `code=` / `token=` part: the view it names and that view's own
// parameters ("#/search?q=x&token=…" gives "#/search?q=x"; "#token=…&/metrics" and
// "#token=…&view=metrics" give "#/metrics"); "#/browse" when it names none.
function withoutCredentials(fragment) {
  let text = fragment.replace(/^#/, "");
  let path = "";
  if (text.startsWith("/")) {
    const at = text.indexOf("?");
    const amp = text.indexOf("&");
    const cut = at < 0 ? amp : amp < 0 ? at : Math.min(at, amp);
    path = cut < 0 ? text : text.slice(0, cut);
    text = cut < 0 ? "" : text.slice(cut + 1);
  }
  const kept = [];
  for (const part of text.split(/[&?]/)) {
    if (!part || /^(token|code)=/.test(part)) continue;
    if (!path && part.startsWith("/")) path = part;
    else if (!path && part.startsWith("view=")) path = "/" + decodeURIComponent(part.slice(5)).replace(/^\/+/, "");
    else kept.push(part);
  }
  return "#" + (path || "/browse") + (kept.length ? "?" + kept.join("&") : "");
}

(function start() {
  sessionStorage.removeItem(LEGACY_KEY);
  const code = /[#&?]code=([^&]+)/.exec(location.hash);
  const token = /[#&?]token=/.test(location.hash);  // an old sign-in URL: tokens no longer travel in URLs
  if (code || token) {  // out of the address bar, keeping the view the link names
    history.replaceState(null, "", location.pathname + withoutCredentials(location.hash));
  }
  if (code) {
    exchange(decodeURIComponent(code[1]));
  } else {
    signInPage(token ? "sign-in URLs no longer carry tokens: paste the token below" : undefined);
  }
})();
