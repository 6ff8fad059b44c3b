// Package questions is the model of an agent's question (envelope next type
// "ask") from the moment it is asked to the moment the agent hears the
// outcome. It is pure: no I/O, no clock; the turn function stores what it
// decides (store.Question, one record per thread, every change a
// compare-and-set) and sends what it renders.
//
// # A question's life
//
//	asked (New, open) ──► rendered (Prompt: the current field's controls)
//	   │  press / reply ─► Press / Text ──► next field (Edit) … ──► answered ─► agent: accept
//	   │  Skip ─────────────────────────────────────────────────► declined ─► agent: decline
//	   └─ expiry (sweeper), a newer question, questions off ─► Cancel ──► agent: cancel
//
// Only the owner answers (the sender of the message whose turn asked; for a
// proactive turn or a send the owner its source named, else, in a
// one-to-one chat, the person there: a turn never asks a group a question
// nobody owns; for Parley's cancel, the closed question's owner); the
// first valid answer wins, and a press or reply after it changes nothing.
// Every control carries Parley's own short data, never the agent's field
// names or values: "<short id>:<field>:<option>" and the like, at most 16
// bytes. A free-text or number field is answered by the owner's next message
// in the thread; an invalid one gets a one-line re-prompt and the question
// stays open. A multi-field form is asked one field at a time, in one
// message that is edited as it goes.
//
// The agent hears the outcome as a turn request on the thread's queue, in
// order with the thread's other turns, with answer {question_id, action,
// content}. Parley's own cancels travel as KindAnswer events of
// message.Parley (CancelEvent), so they too wait their turn.
package questions
