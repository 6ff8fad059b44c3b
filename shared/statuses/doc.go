// Package statuses applies a platform's delivery and read reports (WhatsApp's
// sent, delivered, read and failed statuses; message.KindStatus events) to
// the units Parley sent, for the ingress function, which applies them as
// they arrive, and for the turn, which applies what ingress had to keep for
// later.
//
// A status costs one strongly consistent read of its intent and, when it
// changes its unit, one conditional write (intent.Report, intent.MarkSent,
// intent.MarkUndelivered, intent.GiveUp). Each transition is a
// compare-and-set, so a status applied twice changes nothing the second time
// and needs no dedupe key. The one status that cannot be applied at once is
// a failure reported before its unit's receipt is recorded (Wait): the
// caller keeps it durably and tries again after Retry (docs/adr/0025).
package statuses
