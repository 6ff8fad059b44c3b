// Package fakeapi is what every fake chat platform API shares: a Recorder
// of the messages and chat actions it accepted (with the bubble lines
// `make run` prints and a WaitFor for tests), the queue of injected faults,
// message-id issuers, and the handling of one send through them (Handle),
// which holds the subtle part every fake must get right in the same way: a
// fault answers before anything is recorded, except a dropped answer,
// which comes after the message was recorded (an unknown outcome).
//
// Each platform's fake (faketelegram, fakeslack) keeps only what is its
// platform's: its routes, its validation and its error format.
package fakeapi
