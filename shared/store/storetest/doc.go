// Package storetest is the conformance suite for Parley's state store: every
// claim and intent behaviour the ingress, turn and delivery functions rely
// on, including races, written once and run against the real backend
// (DynamoDB Local in dynamostore's tests). Any other backend must pass it too.
package storetest
