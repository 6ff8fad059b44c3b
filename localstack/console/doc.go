// Package console is make run's console, served at /console: every
// conversation on every platform drawn as its person sees it (bubbles with
// their timing, a question's controls, pressable), a composer that posts
// real webhooks, signed as each platform signs them, to the functions
// (fakeplatform.Signer: the production path), each message's timeline from
// the records and the log by its correlation id, and the attention list
// with the operator CLI's own actions (shared/operator).
//
// The page is plain HTML, CSS and JavaScript embedded in the binary (no
// build step), kept current by server-sent events. Everything it shows
// that an agent or a person wrote is text: the page builds its DOM with
// textContent only, and a Content-Security-Policy allows no script but its
// own. It answers loopback clients only, on a loopback Host, unless
// PARLEY_CONSOLE_ALLOW_REMOTE is set; its decisions (post, press, resend,
// abandon, redrive) need a JSON body and its own header, which a page of
// another origin cannot send.
//
// The console reads only what the functions keep and what the fake
// platforms received; it writes nothing on a message's path (an operator's
// decisions are the operator's).
package console
