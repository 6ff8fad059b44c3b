// Package agent is Parley's side of the agent protocol
// (docs/agent-protocol.md): it POSTs one turn to the user's agent and
// classifies what came back. It also holds the built-in echo agent.
//
// # A turn
//
// The turn function builds a TurnRequest from an inbound event and calls the
// agent once:
//
//	c := &agent.Client{URL: cfg.AgentURL, Secret: secret, Timeout: cfg.AgentTimeout}
//	reply, err := c.Call(ctx, agent.TurnRequest{
//		TurnID: intentID, ThreadKey: ev.Thread.Key(), SessionKey: ev.Thread.Key(), Event: ev,
//	})
//
// The request is JSON, signed with Standard Webhooks headers (package
// standardwebhooks) whose webhook-id is the TurnID, so the agent can verify it
// with any Standard Webhooks library and dedupe retries on it.
//
// # Replies
//
// A successful Call returns a Reply:
//
//	200 application/json  Body is an openab.turn.v1 envelope (package envelope plans it)
//	200 text/plain        Body is the reply text
//	204                   nothing to say: the turn is silent
//	202                   Accepted: the agent posts the reply later (POST /reply)
//
// # Failures
//
// Every failure is an *Error whose Kind says what to do:
//
//	KindTransient  no answer, timeout, 5xx, 408, 425, 429: retry the turn
//	               through the queue (after RetryAfter when set), same TurnID
//	KindPermanent  other 4xx, 3xx, an oversized reply, an unsupported
//	               Content-Type, a misconfigured client: no retry of the call
//	               can succeed. The turn still retries 401, 403, 404, 405 and
//	               410 (Error.Status) until its age: they mean Parley is
//	               misconfigured, which an operator fixes.
//
// Call never retries by itself: exactly one HTTP attempt per Call, so the
// queue's visibility timeout paces retries and a slow agent is not hammered.
// Errors hold no secret, no message text and not the agent URL (it may carry
// a token).
//
// # The echo agent
//
// With URL "builtin:echo" (BuiltinEcho) the Client serves Echo in process
// through an http.RoundTripper: signing, verification and classification all
// run, with no network. Echo is an ordinary http.Handler, so a local runner
// can mount it too. See Echo for its replies.
package agent
