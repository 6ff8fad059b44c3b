package fakeapi

import "net/http"

// Config is what every fake API is built from.
type Config struct {
	// Token is the bot token the fake accepts; any other gets the
	// platform's own refusal. Empty refuses every call.
	Token string
	// Recorder records what the fake accepts and holds its faults.
	// Defaults to a new one.
	Recorder *Recorder
}

// Base is what every fake API holds: the token it accepts, the recorder it
// writes to and the issuer of its message ids. A fake embeds it.
type Base struct {
	token string
	rec   *Recorder
	ids   IDs
}

// NewBase returns the Base of a fake built from c whose platform issues
// message ids with ids.
func NewBase(c Config, ids IDs) Base {
	if c.Recorder == nil {
		c.Recorder = New(Options{})
	}
	return Base{token: c.Token, rec: c.Recorder, ids: ids}
}

// Recorder is where the fake records what it accepts.
func (b *Base) Recorder() *Recorder { return b.rec }

// Authorized reports whether token is the one the fake accepts.
func (b *Base) Authorized(token string) bool { return b.token != "" && token == b.token }

// Send runs one send through the recorder (Recorder.Handle), with the
// fake's message ids.
func (b *Base) Send(w http.ResponseWriter, s Send) {
	s.IDs = b.ids
	b.rec.Handle(w, s)
}
