// Package triage keeps a proactive agent quiet: it decides, before any model
// call, whether an event that no human sent (an alert, a cron tick, a GitHub
// event) may go on to the agent. A human's message never reaches it: the
// ingress pipeline calls Admit only for events of message.KindProactive.
//
// # Rules, in order
//
//  1. duplicate: the event id was seen (the pipeline's dedupe claim; a
//     suppressed event's id is recorded too, so a retry stays suppressed).
//  2. quiet_hours: "HH:MM-HH:MM" read on the wall clock of the policy's IANA
//     time zone, so the boundaries stay at local time across DST; it may wrap
//     midnight; equal ends mean never quiet. Mode suppress drops the event;
//     mode defer accepts it with NotBefore at the end of quiet hours (it waits
//     on inbound.fifo through the message's visibility).
//  3. cooldown: the least time between two accepted events of a conversation.
//  4. daily_cap: the most accepted events of a conversation per local day; the
//     day starts at local midnight.
//
// Quiet hours need no state. Cooldown and cap are one record per conversation
// in the Counters store ("tri#<chat key>": every thread of a chat shares
// one), changed by one conditional
// write per accepted event that checks both rules and counts the event
// atomically. A refused write changes nothing, so a suppressed event neither
// uses up the cap nor restarts the cooldown, and concurrent Lambda instances
// cannot together exceed the cap. A deferred event counts as of the end of
// quiet hours: against that day's cap, and as the last event at that time, so
// a quiet night's alerts wake a conversation once per cooldown.
//
// # Configuration
//
// A Config holds a default Policy and per-conversation Overrides, keyed by
// thread key or chat key. ParseConfig reads it from JSON (PARLEY_TRIAGE):
//
//	{"time_zone": "Europe/Berlin", "quiet_hours": "22:00-07:00", "cooldown": "10m", "daily_cap": 20,
//	 "conversations": {"telegram:7000000001:42": {"quiet_mode": "defer"}}}
//
// # Use
//
//	tr, err := triage.New(cfg, store, log) // store: *dynamostore.Store
//	pipeline := &ingress.Pipeline{..., Triage: tr}
//
// The clock is the pipeline's: Admit decides at the now it is given.
package triage
