// Package config reads Parley's settings in one place: environment variables
// for everything, and — in AWS — the platform secrets from one Secrets
// Manager secret (a JSON object keyed like the variables), so no secret is
// ever in the CloudFormation template or a plain environment variable.
//
// Library packages never read the environment; functions and the local
// runner call Load once at start and pass the pieces down.
package config
