// Parley console. Everything an agent or a person wrote reaches the page as
// JSON and is put in it with textContent: never parsed as markup. The page
// builds its DOM with el() only.
"use strict";

const $ = (id) => document.getElementById(id);

// el makes an element: attrs are set as properties or data-*; children are
// nodes or text (as text nodes).
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k.startsWith("data-")) e.setAttribute(k, String(v));
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e[k] = v;
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

const view = { state: null, thread: null, key: null, tab: "chats", timeline: null };

const platformNames = {
  telegram: "Telegram", slack: "Slack", discord: "Discord", line: "LINE",
  whatsapp: "WhatsApp", teams: "Teams", googlechat: "Google Chat",
};
const pname = (p) => platformNames[p] || p;

async function api(path, body) {
  const opts = body === undefined ? {} : {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Parley-Console": "1" },
    body: JSON.stringify(body),
  };
  const resp = await fetch("api/" + path, opts);
  let data = null;
  try { data = await resp.json(); } catch (e) { data = { error: resp.statusText }; }
  return { status: resp.status, data };
}

function time(t) {
  if (!t || t.startsWith("0001")) return "";
  const d = new Date(t);
  return d.toISOString().slice(11, 23);
}

// ---- conversations -------------------------------------------------------

function renderConversations() {
  const list = $("conversations");
  const convs = view.state.conversations;
  if (!convs.length) return;
  list.replaceChildren(...convs.map((c) => el("button", {
    class: "conv p-" + c.platform + (c.thread === view.thread ? " active" : ""), type: "button",
    "data-thread": c.thread, "data-testid": "conversation",
    onclick: () => { view.thread = c.thread; render(); },
  },
  el("span", { class: "who" }, el("span", { class: "dot" }), pname(c.platform), c.chat_type ? el("span", { class: "kind-tag" }, c.chat_type) : null),
  el("span", { class: "where" }, c.thread))));
}

// Renderers draw a bubble's content by its kind. Kinds this console does
// not know yet (a live preview, media) fall back to their text, tagged.
const renderers = {
  text: (it) => [it.text],
  prompt: (it) => [it.text, controls(it)],
};

function controls(it) {
  if (!it.controls || !it.controls.length) return null;
  return el("div", { class: "controls" }, it.controls.map((c, i) => el("button", {
    type: "button", "data-testid": "control", "data-label": c.label,
    onclick: (ev) => { ev.stopPropagation(); press(it, i); },
  }, c.label)));
}

function renderItem(it) {
  const draw = renderers[it.content] || ((x) => [x.text, x.content ? el("span", { class: "kind-tag" }, x.content) : null]);
  const msg = el("div", {
    class: "msg" + (it.correlation_id && it.correlation_id === view.key ? " selected" : ""),
    "data-testid": it.kind, "data-key": it.correlation_id, title: it.correlation_id ? "timeline of " + it.correlation_id : "",
    onclick: () => { if (it.correlation_id) showTimeline(it.correlation_id); },
  }, it.kind === "person" || it.kind === "notice" || it.kind === "held" ? [it.text] : draw(it));
  const meta = el("div", { class: "meta" },
    el("span", {}, time(it.at)),
    it.since_ms ? el("span", { class: "since", "data-testid": "since" }, "+" + (it.since_ms / 1000).toFixed(2) + "s") : null,
    it.edited ? el("span", {}, "edited") : null,
    it.kind === "held" ? el("span", { class: "warn" }, it.note) : null,
    it.kind === "person" && it.note && it.note !== "outside" ? el("span", {}, it.note) : null,
    it.kind === "bubble" && it.note ? el("span", { class: "warn" }, it.note) : null);
  return el("li", { class: "item " + it.kind }, msg, meta);
}

function renderChat() {
  const conv = view.state.conversations.find((c) => c.thread === view.thread);
  const head = $("chat-head");
  const list = $("bubbles");
  if (!conv) {
    list.replaceChildren();
    list.className = "";
    return;
  }
  head.replaceChildren(pname(conv.platform), el("small", {}, conv.chat_type || "", " ", conv.thread));
  list.className = "p-" + conv.platform;
  const atBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 40;
  list.replaceChildren(...conv.items.map(renderItem));
  if (atBottom) list.scrollTop = list.scrollHeight;
}

function renderComposer() {
  const sel = $("platform");
  if (sel.options.length) return;
  for (const c of view.state.composer) sel.append(el("option", { value: c.platform }, pname(c.platform)));
  sel.addEventListener("change", fillChatTypes);
  fillChatTypes();
}

function fillChatTypes() {
  const c = view.state.composer.find((x) => x.platform === $("platform").value);
  $("chat-type").replaceChildren(...(c ? c.chat_types : []).map((t) => el("option", { value: t }, t)));
}

async function send(ev) {
  ev.preventDefault();
  const text = $("text").value;
  if (!text.trim()) return;
  const status = $("composer-status");
  status.className = "status";
  status.textContent = "posting a signed webhook…";
  const { status: code, data } = await api("say", { platform: $("platform").value, chat_type: $("chat-type").value, text });
  if (code !== 200) {
    status.className = "status bad";
    status.textContent = data.error || ("failed: " + code);
    return;
  }
  $("text").value = "";
  status.textContent = "webhook answered " + data.status + (data.ack ? " (Parley-Ack: " + data.ack + ")" : "") + " · " + data.correlation_id;
  view.thread = data.thread;
  await refresh();
}

async function press(it, index) {
  const status = $("composer-status");
  const { status: code, data } = await api("press", { platform: it.platform, chat: it.chat, message_id: it.message_id, control: index });
  status.className = code === 200 ? "status" : "status bad";
  status.textContent = code === 200 ? "pressed: webhook answered " + data.status + " · " + data.correlation_id : (data.error || "press failed");
  await refresh();
}

// ---- timeline ------------------------------------------------------------

async function showTimeline(key) {
  view.key = key;
  const { status, data } = await api("message?key=" + encodeURIComponent(key));
  view.timeline = status === 200 ? data : { error: data.error, correlation_id: key };
  renderTimeline();
  renderChat();
}

function renderTimeline() {
  const tl = view.timeline;
  const box = $("timeline");
  if (!tl) return;
  if (tl.error) {
    box.replaceChildren(el("h2", {}, "Timeline"), el("p", { class: "status bad" }, tl.error));
    return;
  }
  const steps = (tl.steps || []).map((s) => el("li", { class: "step src-" + s.source + (s.level ? " lvl-" + s.level : ""), "data-testid": "step", "data-step": s.step },
    el("div", {}, el("span", { class: "name" }, s.step), el("span", { class: "src " + s.source }, s.source + (s.function ? ":" + s.function : ""))),
    el("div", { class: "when" }, time(s.at), s.unit ? " · " + s.unit : ""),
    el("div", { class: "detail" }, s.detail || Object.entries(s.fields || {}).map(([k, v]) => k + "=" + JSON.stringify(v)).join(" "))));
  const units = (tl.units || []).map((u) => el("tr", { "data-testid": "unit", "data-state": u.state },
    el("td", {}, u.id), el("td", {}, u.state), el("td", {}, u.text), el("td", {}, (u.receipt || []).join(", "))));
  box.replaceChildren(
    el("h2", {}, "Timeline"),
    el("dl", { class: "kv" },
      el("dt", {}, "correlation id"), el("dd", {}, el("span", { class: "corr", "data-testid": "correlation-id" }, tl.correlation_id)),
      el("dt", {}, "intent / turn"), el("dd", {}, el("span", { class: "corr" }, tl.intent_id)),
      el("dt", {}, "thread"), el("dd", {}, tl.thread || "")),
    el("ol", { class: "steps" }, steps),
    units.length ? el("table", { class: "units" }, el("thead", {}, el("tr", {}, el("th", {}, "unit"), el("th", {}, "state"), el("th", {}, "text"), el("th", {}, "receipt"))), el("tbody", {}, units)) : null,
    el("ul", { class: "notes" }, (tl.notes || []).map((n) => el("li", {}, n))));
}

// ---- attention -----------------------------------------------------------

function renderAttention() {
  const items = view.state.attention || [];
  const badge = $("attention-count");
  badge.textContent = items.length;
  badge.className = "badge" + (items.length ? " hot" : "");
  $("attention-empty").hidden = items.length > 0;
  $("attention-table").querySelector("tbody").replaceChildren(...items.map((it) => el("tr", { "data-testid": "attention-item", "data-kind": it.kind, "data-key": it.key },
    el("td", {}, time(it.since)), el("td", {}, it.kind), el("td", { class: "key" }, it.key),
    el("td", { class: "key" }, it.correlation_id ? el("a", { href: "#", onclick: (e) => { e.preventDefault(); openMessage(it); } }, it.correlation_id) : ""),
    el("td", {}, it.detail),
    el("td", {}, (it.actions || []).map((a) => el("button", { type: "button", "data-testid": "action-" + a.split(" ")[0], onclick: () => act(a, it) }, a))))));
  $("attention-notes").replaceChildren(...(view.state.notes || []).map((n) => el("li", {}, n)));
}

function openMessage(it) {
  view.tab = "chats";
  if (it.thread) view.thread = it.thread;
  render();
  showTimeline(it.correlation_id);
}

function ask(text, withField) {
  return new Promise((resolve) => {
    $("dialog-text").textContent = text;
    $("dialog-field").hidden = !withField;
    $("dialog").hidden = false;
    const done = (ok) => { $("dialog").hidden = true; resolve(ok ? ($("dialog-input").value || true) : false); };
    $("dialog-yes").onclick = () => done(true);
    $("dialog-no").onclick = () => done(false);
  });
}

async function act(action, it) {
  const status = $("attention-status");
  status.className = "status";
  let res;
  if (action === "resend") {
    res = await api("resend", { unit: it.key, yes: false });
    if (res.status === 409 && res.data.confirm) {
      if (!(await ask(res.data.confirm + "\n\nResend anyway?"))) return;
      res = await api("resend", { unit: it.key, yes: true });
    }
  } else if (action === "abandon") {
    if (!(await ask("Abandon " + it.key + "? It is never sent, and leaves this list."))) return;
    res = await api("abandon", { unit: it.key });
  } else if (action.startsWith("redrive")) {
    const age = await ask("Redrive the " + it.queue + " dead-letter queue, refusing if any message was made longer ago than:", true);
    if (!age) return;
    res = await api("redrive", { queue: it.queue, max_age: age });
  } else {
    return;
  }
  status.className = res.status === 200 ? "status" : "status bad";
  status.textContent = res.data.error || ((res.data.outcome || "") + ": " + (res.data.detail || ""));
  await refresh();
}

// ---- the whole page ------------------------------------------------------

function render() {
  $("tab-chats").classList.toggle("active", view.tab === "chats");
  $("tab-attention").classList.toggle("active", view.tab === "attention");
  $("chats-view").hidden = view.tab !== "chats";
  $("attention-view").hidden = view.tab !== "attention";
  if (!view.state) return;
  if (!view.thread && view.state.conversations.length) view.thread = view.state.conversations[0].thread;
  renderComposer();
  renderConversations();
  renderChat();
  renderAttention();
}

// refresh draws the page from the server's state. A change that comes
// while a refresh runs is drawn by one more refresh after it, never lost.
let refreshing = null;
let again = false;
async function refresh() {
  if (refreshing) {
    again = true;
    return refreshing;
  }
  refreshing = (async () => {
    do {
      again = false;
      const { status, data } = await api("state");
      if (status === 200) view.state = data;
      render();
      if (view.key) {
        const r = await api("message?key=" + encodeURIComponent(view.key));
        if (r.status === 200) { view.timeline = r.data; renderTimeline(); }
      }
    } while (again);
  })();
  try { await refreshing; } finally { refreshing = null; }
}

function live() {
  const es = new EventSource("api/events");
  es.addEventListener("change", () => refresh());
  es.onopen = () => { $("live").textContent = "live"; $("live").className = "live on"; };
  es.onerror = () => { $("live").textContent = "reconnecting…"; $("live").className = "live"; };
}

document.addEventListener("DOMContentLoaded", () => {
  $("composer").addEventListener("submit", send);
  $("tab-chats").addEventListener("click", () => { view.tab = "chats"; render(); });
  $("tab-attention").addEventListener("click", () => { view.tab = "attention"; render(); });
  refresh();
  live();
});
