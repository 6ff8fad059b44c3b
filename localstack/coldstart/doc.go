// Package coldstart measures what a cold start of each function costs, under
// the Lambda Runtime Interface Emulator (the same runtime API Lambda serves):
// its init duration (from the runtime's start to its first request for an
// event, as the emulator's INIT REPORT gives it), its peak resident memory
// after one invoke, and its bootstrap's size. Its anchor is what a user
// would write (testdata/sdk: the SDK's default configuration and DynamoDB,
// SQS and Secrets Manager clients built at init, called by its handler),
// built and run the same way in the same run, with an aws-lambda-go hello
// world (testdata/hello) beside it for reference. Its benchmark is part of
// make bench; docs/capacity.md gives its figures.
package coldstart
