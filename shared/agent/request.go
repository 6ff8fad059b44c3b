package agent

import (
	"github.com/parleyhq/parley/shared/history"
	"github.com/parleyhq/parley/shared/message"
)

// Version is the turn request schema this package sends, in TurnRequest.Version.
const Version = "parley.turn.v1"

// TurnRequest is the JSON body Parley POSTs to the agent for one turn. Every
// field is documented for agent authors in docs/agent-protocol.md; agents must
// ignore fields they do not know, so fields can be added within a version.
type TurnRequest struct {
	// Version is the request schema, Version. Call fills it when empty.
	Version string `json:"version"`
	// TurnID identifies the turn: stable for one inbound event across every
	// retry, so the agent may dedupe on it. It is also the request's
	// webhook-id header. Required.
	TurnID string `json:"turn_id"`
	// ThreadKey is the conversation the turn belongs to; turns of one
	// thread reach the agent one at a time, in order.
	ThreadKey string `json:"thread_key"`
	// SessionKey is the key the agent should keep conversation memory
	// under. Opaque; today it equals ThreadKey.
	SessionKey string `json:"session_key"`
	// Event is the inbound event, normalized across platforms.
	Event message.Event `json:"event"`
	// Answer is set when the turn carries the result of a question the
	// agent asked (next type "ask"): docs/agent-protocol.md#questions.
	Answer *Answer `json:"answer,omitempty"`
	// History is the thread's recent transcript, oldest first, without
	// this turn's own events, when the deployment keeps one
	// (PARLEY_HISTORY): docs/agent-protocol.md#history.
	History []history.Entry `json:"history,omitempty"`
	// Events, when set, are every event this turn answers, in order: the
	// messages a busy thread collected while a turn ran
	// (PARLEY_BUSY_POLICY collect). Event is the last of them.
	Events []message.Event `json:"events,omitempty"`
	// Superseded names a turn of the thread whose reply this turn's
	// message interrupted (PARLEY_BUSY_POLICY interrupt), and the bubbles
	// of it that were never sent.
	Superseded *Superseded `json:"superseded,omitempty"`
}

// Superseded is a turn whose undelivered bubbles a newer message
// cancelled.
type Superseded struct {
	// TurnID is the superseded turn.
	TurnID string `json:"turn_id"`
	// Bubbles are its bubbles that were cancelled before any of their
	// text was sent, in order.
	Bubbles []SupersededBubble `json:"bubbles"`
}

// SupersededBubble is one cancelled bubble.
type SupersededBubble struct {
	// ID is the bubble's id in the superseded reply.
	ID   string `json:"id"`
	Text string `json:"text"`
}

// Answer is the result of a question the agent asked, in the shape of an MCP
// elicitation result.
type Answer struct {
	// QuestionID is the id Parley gave the question.
	QuestionID string `json:"question_id"`
	// Action is AnswerAccept, AnswerDecline or AnswerCancel (the question
	// expired or was withdrawn).
	Action string `json:"action"`
	// Content holds the answered fields under the agent's own keys, for
	// AnswerAccept.
	Content map[string]any `json:"content,omitempty"`
}

// Answer actions, as in MCP elicitation results.
const (
	AnswerAccept  = "accept"
	AnswerDecline = "decline"
	AnswerCancel  = "cancel"
)
