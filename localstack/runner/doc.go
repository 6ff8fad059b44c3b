// Package runner hosts every Parley function in one process on the local
// stack, the way AWS would run them:
//
//   - Function URLs: an HTTP server with one path per ingress function
//     (/telegram, /slack, …). Each request is translated into the Function URL
//     event Lambda would deliver and handed to the function's Lambda handler.
//   - SQS event source mappings: a Poller per consumer function receives up to
//     ten messages, invokes the handler with a deadline like Lambda's, deletes
//     what did not fail, and leaves failures to their visibility timeout —
//     exactly the contract the functions are written against.
//
// Tests use the same pollers, so end-to-end tests exercise what make run runs.
package runner
