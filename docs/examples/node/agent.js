#!/usr/bin/env node
// A Parley agent in Node.js (20 or newer), no dependencies.
//
// It verifies Parley's signature on every turn request and answers:
//
//   /seat           a question with buttons (window or aisle); the answer turn is confirmed
//   /slow TEXT      202 at once, then the answer previewed as it is written
//                   (POST /reply/preview) and posted to POST /reply as a pair
//   /remind TEXT    204 (nothing now), then its own message sent with POST /send
//   /stream TEXT    a stream (NDJSON): a status line, TEXT word by word, then two bubbles
//   anything else   two bubbles
//
// Environment: PARLEY_AGENT_SECRET (the shared secret), PARLEY_URL (where
// /reply and /send are: the stack's ReplyUrl, or http://127.0.0.1:8787 under
// make run), PORT (0 picks a free one; the chosen port is printed).
"use strict";
const crypto = require("node:crypto");
const http = require("node:http");

const secret = process.env.PARLEY_AGENT_SECRET;
const parleyURL = (process.env.PARLEY_URL || "http://127.0.0.1:8787").replace(/\/+$/, "");
const key = secret.startsWith("whsec_") ? Buffer.from(secret.slice(6), "base64") : Buffer.from(secret);
const tolerance = 300;

function sign(id, ts, body) {
  const mac = crypto.createHmac("sha256", key).update(`${id}.${ts}.`).update(body).digest();
  return "v1," + mac.toString("base64");
}

function verify(headers, body) {
  const id = headers["webhook-id"] ?? "", ts = headers["webhook-timestamp"] ?? "";
  if (!id || !/^\d+$/.test(ts) || Math.abs(Date.now() / 1000 - Number(ts)) > tolerance) return false;
  const want = Buffer.from(sign(id, ts, body));
  return (headers["webhook-signature"] ?? "").split(" ").some((s) => {
    const got = Buffer.from(s);
    return got.length === want.length && crypto.timingSafeEqual(got, want);
  });
}

// post sends payload to Parley, signed as Parley signs, retrying the same
// post (same webhook-id) while Parley cannot take it. It resolves to
// Parley's answer.
async function post(path, payload) {
  const body = Buffer.from(JSON.stringify(payload));
  const id = "msg_" + crypto.randomBytes(12).toString("hex");
  for (let attempt = 0; attempt < 5; attempt++) {
    const ts = String(Math.floor(Date.now() / 1000));
    try {
      const resp = await fetch(parleyURL + path, {
        method: "POST", body,
        headers: { "Content-Type": "application/json", "webhook-id": id, "webhook-timestamp": ts, "webhook-signature": sign(id, ts, body) },
      });
      const out = await resp.text();
      console.log(`${path}: ${resp.status} ${out}`);
      if (resp.status < 300) return out ? JSON.parse(out) : {};
      if (resp.status < 500) return {}; // refused for a reason: retrying changes nothing
    } catch (err) {
      console.log(`${path}: ${err}`);
    }
    await sleep(500 * (attempt + 1));
  }
  return {};
}

function sleep(ms) { return new Promise((r) => setTimeout(r, ms)); }

// preview shows the reply as written so far (all of it, each time) with
// POST /reply/preview. A preview is best effort: one Parley holds back
// (throttled, early: before Parley read the 202, or rate_limited by the
// platform) is posted again when it says, so that each of these is seen.
async function preview(turnID, text, status) {
  const payload = { turn_id: turnID, ...(text ? { text } : {}), ...(status ? { status } : {}) };
  for (let i = 0; i < 10; i++) {
    const ans = await post("/reply/preview", payload);
    if (ans.shown || !["throttled", "early", "rate_limited"].includes(ans.reason)) return;
    await sleep(ans.retry_after_ms ?? 1000);
  }
}

function envelope(texts, ask) {
  const env = { schema: "openab.turn.v1", messages: texts.map((text, i) => ({ id: `b${i + 1}`, text })) };
  if (ask) env.next = { type: "ask", request: ask };
  return env;
}

const seat = {
  message: "Window or aisle?",
  requestedSchema: { type: "object", required: ["seat"], properties: {
    seat: { type: "string", title: "Seat", oneOf: [{ const: "window", title: "Window" }, { const: "aisle", title: "Aisle" }] } } },
};

function later(ms, fn) { setTimeout(() => { fn().catch((err) => console.log(String(err))); }, ms); }

// answer returns [status, envelope or null] for a turn request.
function answer(req) {
  const turnID = req.turn_id, event = req.event;
  if (req.answer) {
    const a = req.answer;
    if (a.action === "accept") return [200, envelope([`booked: ${a.content.seat} seat (node agent)`])];
    return [200, envelope([`no seat then (${a.action})`])];
  }
  const text = event.text ?? "";
  const space = text.indexOf(" ");
  const command = space < 0 ? text : text.slice(0, space), rest = space < 0 ? "" : text.slice(space + 1);
  switch (command) {
    case "/seat":
      return [200, envelope(["let's pick your seat"], seat)];
    case "/slow":
      later(200, async () => {
        const done = `done thinking about ${rest}`;
        await preview(turnID, "", "on it");
        await preview(turnID, "done thinking", "on it");
        await preview(turnID, done, "");
        // The first posted reply becomes the preview (or clears it).
        await post("/reply", { turn_id: turnID, final: false, text: done });
        await post("/reply", { turn_id: turnID, final: true, envelope: envelope(["(node agent)"]) });
      });
      return [202, null];
    case "/stream":
      return [200, stream(rest)];
    case "/remind":
      later(300, () => post("/send", { thread_key: req.thread_key, idempotency_key: "remind-" + turnID,
        text: `reminder: ${rest} (node agent)`, relation: "followup" }));
      return [204, null];
  }
  return [200, envelope([`you said: ${text}`, "(node agent)"])];
}

// stream yields the lines of a streamed reply
// (docs/schema/parley.stream.v1.json): a status line, the text as deltas,
// then the final envelope. Parley shows the deltas as a preview while they
// come; only the final is the reply.
async function* stream(text) {
  yield { type: "status", text: "looking it up" };
  const words = text.split(/\s+/).filter(Boolean);
  for (const [i, word] of words.entries()) {
    await sleep(200); // the agent thinking
    yield { type: "delta", text: i === 0 ? word : " " + word };
  }
  yield { type: "final", envelope: envelope([words.join(" "), "(node agent)"]) };
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const body = Buffer.concat(chunks);
    if (req.method !== "POST" || !verify(req.headers, body)) {
      res.writeHead(401).end();
      return;
    }
    const [status, env] = answer(JSON.parse(body));
    if (!env) {
      res.writeHead(status).end();
      return;
    }
    if (typeof env[Symbol.asyncIterator] === "function") {
      // A stream: one JSON object a line, each sent as it is ready.
      res.writeHead(status, { "Content-Type": "application/x-ndjson" });
      (async () => {
        for await (const line of env) res.write(JSON.stringify(line) + "\n");
        res.end();
      })().catch((err) => { console.log(String(err)); res.destroy(); });
      return;
    }
    res.writeHead(status, { "Content-Type": "application/json" }).end(JSON.stringify(env));
  });
});
server.listen(Number(process.env.PORT ?? 8000), "127.0.0.1", () => {
  console.log(`listening on ${server.address().port}`);
});
