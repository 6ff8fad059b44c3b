// Package app wires Parley's functions from configuration: it builds the AWS
// clients, the store and queues, the platform adapters and the processors
// once, at cold start. Each functions/<name>/main.go and the local runner call
// the same constructors, so what runs locally is what runs in Lambda.
package app
