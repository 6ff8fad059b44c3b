// Command parley-local runs Parley on this machine, without Docker: DynamoDB
// Local and fauxqs, every function (ingress over HTTP, turn and delivery
// pollers), the built-in echo agent, and a fake API of every chat platform
// that prints each delivered bubble with the time since the previous one.
//
//	parley-local                      start everything (make run); Ctrl-C stops it
//	parley-local post FILE [PLATFORM] sign a sample webhook and post it to the runner
//	parley-local press PLATFORM CHAT MESSAGE DATA [USER]
//	                                  press a control of a question make run printed
//	parley-local discord-commands     register /ask and "Ask the agent" with Discord
//	parley-local load [-threads N] [-messages M] [-redeliver F]
//	                                  a bounded load run: throughput, p50/p99, order and exactly-once
//
// Every setting is an environment variable (see README.md). Unset secrets and
// URLs get local demo values; set TELEGRAM_BOT_TOKEN and
// TELEGRAM_API_BASE_URL=https://api.telegram.org (say) to talk to a real
// platform instead of the fake one.
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
	defer stop()
	var err error
	switch {
	case len(os.Args) > 1 && os.Args[1] == "post":
		err = post(ctx, os.Stdout, os.Getenv, os.Args[2:])
	case len(os.Args) > 1 && os.Args[1] == "press":
		err = press(ctx, os.Stdout, os.Getenv, os.Args[2:])
	case len(os.Args) > 1 && os.Args[1] == "load":
		err = load(ctx, os.Stdout, os.Getenv, os.Args[2:])
	case len(os.Args) > 1 && os.Args[1] == "discord-commands":
		err = discordCommands(ctx, os.Stdout, os.Getenv, os.Args[2:])
	case len(os.Args) > 1 && os.Args[1] != "run":
		err = fmt.Errorf("unknown command %q: want run, post, press, load or discord-commands", os.Args[1])
	default:
		err = run(ctx, os.Stdout, os.Getenv, nil)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "parley-local:", err)
		os.Exit(1)
	}
}
