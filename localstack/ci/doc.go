// Package ci checks what continuous integration runs: .ci/run, the one
// command CI calls on a clean clone. It holds tests only.
package ci
