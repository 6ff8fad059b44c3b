// Package history is a thread's transcript: what the people in it said
// and what Parley delivered to them, kept (opt-in, PARLEY_HISTORY) so
// that each turn request can carry the recent exchanges as the person saw
// them.
//
// A transcript holds entries in time order: a person's messages, answers
// and reactions, and the bubbles Parley delivered, each from its receipt
// (a bubble that never reached the platform is never in it). It is bounded
// twice, by a number of entries and by its encoded size; the oldest
// entries go first. Merge, Edit and Delete are pure: the turn reads a
// thread's transcript, changes it with them, and writes it back with a
// compare-and-set (package store).
package history
