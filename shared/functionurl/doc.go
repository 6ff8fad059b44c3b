// Package functionurl adapts a net/http handler to Lambda Function URL events
// and back, so a webhook's core is written once as an http.Handler: Lambda
// serves it through Handler, and the local runner serves it by translating
// real HTTP requests into the very same events (ToEvent, WriteResponse).
package functionurl
