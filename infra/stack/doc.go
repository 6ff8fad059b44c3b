// Package stack defines Parley's one CloudFormation stack with the AWS CDK:
// the state table, the FIFO queues and their dead-letter queues, one Lambda
// function per entry of registry.Functions(), Function URLs (with reserved
// concurrency) for the ingress functions, SQS event source mappings for the
// consumers, one Secrets Manager secret per secret key (the generated agent
// secret, and references by name to the ones the operator creates), roles
// that may read only their function's own secrets and otherwise hold least
// privilege, alarms and a dashboard.
//
// Everything that also exists outside AWS (names, keys, timeouts, batch
// sizes, which function sends to which queue) comes from package
// github.com/parleyhq/parley/shared/resources; this package only decides how
// it is expressed in CloudFormation. The tests synthesize the template and
// check it against the same declaration, so the two cannot drift.
//
// Settings come from CDK context (cdk.json or `cdk synth -c key=value`); see
// Config and the Context* constants. docs/adr/0002-infrastructure.md explains
// the decisions that are not obvious from the code.
package stack
