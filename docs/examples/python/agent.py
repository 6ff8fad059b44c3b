#!/usr/bin/env python3
"""A Parley agent in Python, standard library only.

It verifies Parley's signature on every turn request and answers:

  /seat           a question with buttons (window or aisle); the answer turn is confirmed
  /slow TEXT      202 at once, then the answer previewed as it is written
                  (POST /reply/preview) and posted to POST /reply as a pair
  /remind TEXT    204 (nothing now), then its own message sent with POST /send
  /stream TEXT    a stream (NDJSON): a status line, TEXT word by word, then two bubbles
  anything else   two bubbles

Environment: PARLEY_AGENT_SECRET (the shared secret), PARLEY_URL (where
/reply and /send are: the stack's ReplyUrl, or http://127.0.0.1:8787 under
make run), PORT (0 picks a free one; the chosen port is printed).
"""

import base64
import hashlib
import hmac
import json
import os
import secrets
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SECRET = os.environ["PARLEY_AGENT_SECRET"]
PARLEY_URL = os.environ.get("PARLEY_URL", "http://127.0.0.1:8787").rstrip("/")
KEY = base64.b64decode(SECRET[6:]) if SECRET.startswith("whsec_") else SECRET.encode()
TOLERANCE = 300


def sign(msg_id: str, ts: int, body: bytes) -> str:
    mac = hmac.new(KEY, f"{msg_id}.{ts}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(mac).decode()


def verify(headers, body: bytes) -> bool:
    msg_id = headers.get("webhook-id", "")
    ts = headers.get("webhook-timestamp", "")
    if not msg_id or not ts.isdigit() or abs(time.time() - int(ts)) > TOLERANCE:
        return False
    expected = sign(msg_id, int(ts), body).encode()
    return any(hmac.compare_digest(s.encode(), expected) for s in headers.get("webhook-signature", "").split())


def post(path: str, payload: dict) -> dict:
    """POSTs payload to Parley, signed as Parley signs, retrying the same post
    (same webhook-id) while Parley cannot take it. Returns Parley's answer."""
    body = json.dumps(payload).encode()
    msg_id = "msg_" + secrets.token_hex(12)
    for attempt in range(5):
        ts = int(time.time())
        req = urllib.request.Request(PARLEY_URL + path, data=body, method="POST", headers={
            "Content-Type": "application/json",
            "webhook-id": msg_id, "webhook-timestamp": str(ts), "webhook-signature": sign(msg_id, ts, body),
        })
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                out = resp.read().decode()
                print(f"{path}: {resp.status} {out}", flush=True)
                return json.loads(out or "{}")
        except urllib.error.HTTPError as e:
            print(f"{path}: {e.code} {e.read().decode()}", flush=True)
            if e.code < 500:
                return {}  # refused for a reason: retrying changes nothing
        except OSError as e:
            print(f"{path}: {e}", flush=True)
        time.sleep(0.5 * (attempt + 1))
    return {}


def preview(turn_id: str, text: str = "", status: str = "") -> None:
    """Shows the reply as written so far (all of it, each time) with POST
    /reply/preview. A preview is best effort: one Parley holds back
    (throttled, early: before Parley read the 202, or rate_limited by the
    platform) is posted again when it says, so that each of these is seen."""
    payload = {"turn_id": turn_id, **({"text": text} if text else {}), **({"status": status} if status else {})}
    for _ in range(10):
        ans = post("/reply/preview", payload)
        if ans.get("shown") or ans.get("reason") not in ("throttled", "early", "rate_limited"):
            return
        time.sleep(ans.get("retry_after_ms", 1000) / 1000)


def envelope(*texts, ask=None) -> dict:
    env = {"schema": "openab.turn.v1", "messages": [{"id": f"b{i + 1}", "text": t} for i, t in enumerate(texts)]}
    if ask:
        env["next"] = {"type": "ask", "request": ask}
    return env


SEAT = {
    "message": "Window or aisle?",
    "requestedSchema": {"type": "object", "required": ["seat"], "properties": {
        "seat": {"type": "string", "title": "Seat", "oneOf": [
            {"const": "window", "title": "Window"}, {"const": "aisle", "title": "Aisle"}]}}},
}


def later(delay: float, fn, *args) -> None:
    threading.Timer(delay, fn, args).start()


def answer(req: dict):
    """Returns (status, envelope or None) for a turn request."""
    turn_id, event = req["turn_id"], req["event"]
    if req.get("answer"):
        a = req["answer"]
        if a["action"] == "accept":
            return 200, envelope(f"booked: {a['content']['seat']} seat (python agent)")
        return 200, envelope(f"no seat then ({a['action']})")
    text = event.get("text", "")
    command, _, rest = text.partition(" ")
    if command == "/seat":
        return 200, envelope("let's pick your seat", ask=SEAT)
    if command == "/slow":
        def previewed_pair():
            done = f"done thinking about {rest}"
            preview(turn_id, status="on it")
            preview(turn_id, text="done thinking", status="on it")
            preview(turn_id, text=done)
            # The first posted reply becomes the preview (or clears it).
            post("/reply", {"turn_id": turn_id, "final": False, "text": done})
            post("/reply", {"turn_id": turn_id, "final": True, "envelope": envelope("(python agent)")})
        later(0.2, previewed_pair)
        return 202, None
    if command == "/stream":
        return 200, stream(rest)
    if command == "/remind":
        later(0.3, post, "/send", {"thread_key": req["thread_key"], "idempotency_key": "remind-" + turn_id,
                                   "text": f"reminder: {rest} (python agent)", "relation": "followup"})
        return 204, None
    return 200, envelope(f"you said: {text}", "(python agent)")


def stream(text: str):
    """The lines of a streamed reply (docs/schema/parley.stream.v1.json): a
    status line, the text as deltas, then the final envelope. Parley shows
    the deltas as a preview while they come; only the final is the reply."""
    yield {"type": "status", "text": "looking it up"}
    for i, word in enumerate(text.split()):
        time.sleep(0.2)  # the agent thinking
        yield {"type": "delta", "text": word if i == 0 else " " + word}
    yield {"type": "final", "envelope": envelope(" ".join(text.split()), "(python agent)")}


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if not verify(self.headers, body):
            self.send_response(401)
            self.end_headers()
            return
        status, env = answer(json.loads(body))
        self.send_response(status)
        if env is None:
            self.end_headers()
            return
        if not isinstance(env, dict):
            # A stream: one JSON object a line, each sent as it is ready.
            # HTTP/1.0: the response ends when the connection closes.
            self.send_header("Content-Type", "application/x-ndjson")
            self.end_headers()
            for line in env:
                self.wfile.write(json.dumps(line).encode() + b"\n")
                self.wfile.flush()
            return
        out = json.dumps(env).encode()
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *_):
        pass


if __name__ == "__main__":
    server = ThreadingHTTPServer(("127.0.0.1", int(os.environ.get("PORT", "8000"))), Handler)
    print(f"listening on {server.server_address[1]}", flush=True)
    server.serve_forever()
