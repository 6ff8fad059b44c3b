// Package resources declares Parley's AWS resources once: the state table, the
// two FIFO queues with their dead-letter queues, and the functions with what
// each reads, writes and consumes. The CDK stack (infra/) and the local set-up
// (localstack/) both build from these values, and infra's tests check the
// synthesized template against them, so the two cannot drift.
//
// It imports only the standard library: infra, a separate Go module, depends on
// it without pulling the functions' dependencies.
package resources
