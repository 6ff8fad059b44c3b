// Package coldstart measures what a cold start of each function costs, under
// the Lambda Runtime Interface Emulator (the same runtime API Lambda serves):
// its init duration (from the runtime's start to its first request for an
// event, as the emulator's INIT REPORT gives it), its peak resident memory
// after one invoke, and its bootstrap's size, each against an aws-lambda-go
// hello world built and run the same way in the same run. Its benchmark is
// part of make bench; docs/capacity.md gives its figures.
package coldstart
