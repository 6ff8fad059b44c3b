// Package agentapi serves what an agent calls on Parley: POST /reply, the
// reply to a turn it answered with 202.
//
// A turn whose agent answers 202 waits (package turn): its inbound message
// stays on the queue, the thread's later turns behind it, and an await
// record (store.Await) says so until a deadline. The agent posts its reply,
// signed with Standard Webhooks under PARLEY_AGENT_SECRET:
//
//	POST /reply  {"turn_id": "…", "envelope": {…openab.turn.v1…}}
//	POST /reply  {"turn_id": "…", "text": "…"}
//
// The handler verifies the signature on the raw body, checks the post the
// way the turn will plan it (the envelope's limits for the thread's
// platform), and records it on the await record with one conditional write:
// only while the record is open and before its deadline. Then it makes the
// waiting message visible, so the turn plans and delivers the reply at
// once, exactly as if the agent had answered in the turn. Nothing is
// delivered by this function and nothing waits in it.
//
// A post is idempotent on its webhook-id: the same post retried finds
// itself recorded and gets the same answer. Any other post to a turn that
// is answered or timed out is refused (409), to an unknown turn 404, and a
// bad signature, body or envelope changes nothing (401, 400, 413, 422).
package agentapi
