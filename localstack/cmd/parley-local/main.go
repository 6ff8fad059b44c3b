// Command parley-local runs Parley on this machine, without Docker: DynamoDB
// Local and fauxqs, every function (ingress over HTTP, turn and delivery
// pollers), the built-in echo agent, and a fake API of every chat platform
// that prints each delivered bubble with the time since the previous one.
//
//	parley-local [run]                start everything (make run); Ctrl-C stops it
//	parley-local post FILE [PLATFORM] sign a sample webhook and post it to the runner
//	parley-local press PLATFORM CHAT MESSAGE DATA [USER]
//	                                  press a control of a question make run printed
//	parley-local discord-commands     register /ask and "Ask the agent" with Discord
//	parley-local load [-threads N] [-messages M] [-redeliver F]
//	                                  a bounded load run: throughput, p50/p99, order and exactly-once
//
// Every command answers -h with its usage. Every setting is an environment
// variable (see README.md). Unset secrets and URLs get local demo values;
// set TELEGRAM_BOT_TOKEN and TELEGRAM_API_BASE_URL=https://api.telegram.org
// (say) to talk to a real platform instead of the fake one.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/parleyhq/parley/shared/config"
	"github.com/parleyhq/parley/shared/platform/registry"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := cli(ctx, os.Stdout, os.Getenv, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "parley-local:", err)
		os.Exit(1)
	}
}

// command is one verb of the CLI.
type command struct {
	name string
	// args is its synopsis after the verb; doc says what it does.
	args, doc string
	do        func(ctx context.Context, out io.Writer, getenv config.Getenv, args []string) error
}

// commands are the verbs, in the order usage lists them. Set in init: each
// verb's usage (flags) reads the list that holds the verb.
var commands []command

func init() {
	commands = []command{
		{"run", "", "start everything (make run): the emulators, every function, the echo agent, the fake platforms; Ctrl-C stops it", runCommand},
		{"post", "FILE [" + chatPlatforms() + "|events]", "sign a sample webhook the way its platform does and post it to the runner (the platform is FILE's folder unless given)", post},
		{"press", chatPlatforms() + " CHAT MESSAGE DATA [USER]", "press a control of a question make run printed, as its platform's webhook", press},
		{"load", "[-threads N] [-messages M] [-redeliver F] [-timeout D]", "a bounded load run on the local stack: throughput, p50/p99, order and exactly-once", load},
		{"discord-commands", "", "register /ask and \"Ask the agent\" for DISCORD_APPLICATION_ID with DISCORD_BOT_TOKEN", discordCommands},
	}
}

// chatPlatforms is every chat platform of the registry, as a synopsis
// writes a choice: telegram|slack|….
func chatPlatforms() string {
	var names []string
	for _, a := range registry.Chat() {
		names = append(names, string(a.Platform()))
	}
	return strings.Join(names, "|")
}

// cli runs the verb args name (run when none is given). -h, -help or
// --help, for the CLI or any verb, prints the usage and runs nothing.
func cli(ctx context.Context, out io.Writer, getenv config.Getenv, args []string) error {
	verb := "run"
	if len(args) > 0 {
		verb, args = args[0], args[1:]
	}
	switch verb {
	case "-h", "-help", "--help", "help":
		usage(out)
		return nil
	}
	for _, c := range commands {
		if c.name == verb {
			err := c.do(ctx, out, getenv, args)
			if errors.Is(err, flag.ErrHelp) {
				return nil
			}
			return err
		}
	}
	var names []string
	for _, c := range commands {
		names = append(names, c.name)
	}
	return fmt.Errorf("unknown command %q: want %s (parley-local -h lists them)", verb, strings.Join(names, ", "))
}

// usage lists every verb.
func usage(out io.Writer) {
	fmt.Fprintln(out, "usage: parley-local [command] [arguments]   (no command: run)")
	fmt.Fprintln(out)
	for _, c := range commands {
		fmt.Fprintf(out, "  %s %s\n        %s\n", c.name, c.args, c.doc)
	}
	fmt.Fprintln(out, "\nparley-local COMMAND -h prints a command's usage. Settings are environment variables (README.md).")
}

// flags is the flag set of the verb name, whose usage prints its synopsis,
// what it does and its flags: each verb parses its arguments with one, so
// that -h answers with the usage and an unknown flag is refused.
func flags(name string, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		for _, c := range commands {
			if c.name == name {
				fmt.Fprintf(out, "usage: parley-local %s %s\n\n%s\n", c.name, c.args, c.doc)
			}
		}
		var any bool
		fs.VisitAll(func(*flag.Flag) { any = true })
		if any {
			fmt.Fprintln(out)
			fs.PrintDefaults()
		}
	}
	return fs
}

// runCommand is the run verb: it takes no arguments.
func runCommand(ctx context.Context, out io.Writer, getenv config.Getenv, args []string) error {
	fs := flags("run", out)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("run takes no arguments, got %q", fs.Args())
	}
	return run(ctx, out, getenv, nil)
}
