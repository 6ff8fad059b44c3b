// Command parley is Parley's operator CLI: what happened to a message or a
// conversation, what needs a person, a resend or an abandon of a unit, a
// dead-letter queue's guarded redrive, and the stack's status. It works on a
// deployed stack, with your AWS credentials and the stack's outputs
// (--stack NAME), and on make run's emulators (--local).
//
//	parley message KEY        a message's timeline, by its correlation id (its event key)
//	parley thread KEY         every message of a conversation, each with its timeline
//	parley attention          what needs a person, oldest first
//	parley resend UNIT        send a held or failed unit again (asks --yes where a copy may show)
//	parley abandon UNIT       give a held or failed unit up for good
//	parley dlq list QUEUE     the messages of a dead-letter queue, dated
//	parley dlq redrive QUEUE --max-age D
//	                          move them back through SQS's message-move task, unless one is older
//	parley status             queue depths, oldest ages, dead letters, held units, function errors
//
// Every command answers -h with its usage, prints --json on request, is
// safe to run twice, and refuses ambiguous input, changing nothing. Exit
// status: 0 done, 1 failed or refused, 2 a usage or ambiguous input, 3 a
// decision that needs --yes. The library is shared/operator.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli(ctx, os.Stdout, os.Stderr, os.Getenv, os.Args[1:])
	stop()
	if code != 0 {
		fmt.Fprint(os.Stderr, "")
		os.Exit(code)
	}
}
