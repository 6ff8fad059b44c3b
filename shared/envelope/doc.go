// Package envelope turns an agent's raw reply into an ordered delivery plan:
// the platform messages ("units") to send, and what the agent wants next.
// It is pure — no I/O, no clock — so the turn function, the agent-facing
// tests and anything else that plans a reply share one implementation.
//
// # The model
//
// An agent answers a turn with an openab.turn.v1 envelope whose entries are
// bubbles: one bubble is one platform message.
//
//	{"schema": "openab.turn.v1",
//	 "messages": [{"id": "bubble_1", "text": "on it"},
//	              {"id": "bubble_2", "text": "your flight moved to 8pm\ngate B12"}],
//	 "next": {"type": "stop"}}
//
// Build reads the reply and plans it for one platform:
//
//	plan, err := envelope.Build(envelope.Reply{Body: body, ContentType: ct}, cfg, caps)
//	var lim *envelope.LimitError
//	switch {
//	case errors.As(err, &lim): // over max_bubbles or max_bubble_chars: rejected whole
//	case err != nil:           // bad configuration or capabilities
//	}
//	for _, u := range plan.Units { // "bubble_1#1", "bubble_2#1", in order
//		...
//	}
//
// The rules, each covered by a test:
//
//   - A newline is never a boundary: a bubble is one unit unless it is over
//     the platform's limit (Capabilities.TextLimit, counted as the platform
//     counts: Telegram in UTF-16 code units). Then it is split in place
//     (by package split) into parts "<id>#1", "<id>#2", …, and the next
//     bubble keeps its place.
//   - Parsing is strict: unknown or duplicate members are rejected at every
//     level; ids are unique, non-blank, at most 64 bytes, without '#'; a
//     bubble's text is never trimmed but may not be blank. next defaults to
//     stop; silent sends nothing and wins over messages; wait behaves as
//     stop and is recorded; tool is recorded, never executed; ask carries
//     an MCP-style form (see Ask), read into a message.Question.
//   - Limits (Config.MaxBubbles, Config.MaxBubbleChars) reject the whole
//     plan with a *LimitError; nothing is ever truncated.
//   - A reply that should have been an envelope and is not a valid one goes
//     to the parse-error policy: fallback_text (the prose, with every
//     envelope fragment stripped), error_message, or silent. Plan.Problem
//     holds the *ParseError; Plan.Outcome names what happened.
//   - The envelope is never visible: no plan ever holds envelope JSON,
//     complete or truncated, under any policy; prose holding unrelated JSON
//     (even {"schema": "my-db-schema"}) is left intact. Errors and Outcome
//     never hold any of the reply's text.
//
// docs/envelope.md is the reference for agent authors; docs/fixtures holds
// the shared sample replies that both this package's tests and the agent
// tests read.
package envelope
