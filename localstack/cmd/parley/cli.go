package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/parleyhq/parley/shared/operator"
)

// Exit statuses.
const (
	exitOK        = 0
	exitFailed    = 1
	exitUsage     = 2
	exitNeedsYes  = 3
	usageSynopsis = "usage: parley [--local | --stack NAME] COMMAND [ARGUMENTS] [--json]"
)

// command is one verb.
type command struct {
	name, args, doc string
	// min and max bound its positional arguments.
	min, max int
	// flags adds the verb's own flags; run does it.
	flags func(fs *flag.FlagSet) func(ctx context.Context, e *env, args []string) (any, error)
}

// env is what a verb runs with: the operator, where it writes, and how.
type env struct {
	op     *operator.Operator
	out    io.Writer
	asJSON bool
}

var commands []command

func init() {
	commands = []command{
		{"message", "KEY", "a message's timeline, from its webhook to its receipts: KEY is its correlation id (its event key, evt#<platform>#<account>#<event id>), as every log line and the console show it", 1, 1, messageCmd},
		{"thread", "KEY", "every message of a conversation, each with its timeline: KEY is its thread key (platform:account:chat[:thread])", 1, 1, threadCmd},
		{"attention", "", "what needs a person, oldest first: units held in unknown_after_send, failed units, turns stuck past their lease, dead-lettered messages", 0, 0, attentionCmd},
		{"resend", "UNIT", "send a held or failed unit again, in its thread's order: UNIT is its key (<intent id>#<unit id>, as attention shows it); a unit whose earlier send may have arrived on a platform that cannot drop a copy needs --yes", 1, 1, resendCmd},
		{"abandon", "UNIT", "give a held or failed unit up for good: it is never sent, and leaves the attention list", 1, 1, abandonCmd},
		{"dlq", "list|redrive QUEUE [--max-age D]", "list a dead-letter queue's messages, dated by their content; or move them back to QUEUE (inbound, outbound) through SQS's message-move task, refusing, moving nothing, while one was made longer ago than --max-age or cannot be read", 2, 2, dlqCmd},
		{"status", "", "queue depths, oldest message ages, dead-letter counts, held and failed units, each function's errors over the last hour", 0, 0, statusCmd},
		{"erase-history", "THREAD", "forget a conversation's history (PARLEY_HISTORY): THREAD is its thread key (platform:account:chat[:thread]), as turn requests name it", 1, 1, eraseHistoryCmd},
	}
}

// usage lists every verb.
func usage(w io.Writer) {
	fmt.Fprintln(w, usageSynopsis)
	fmt.Fprintln(w)
	for _, c := range commands {
		fmt.Fprintf(w, "  %s %s\n        %s\n", c.name, c.args, c.doc)
	}
	fmt.Fprintln(w, `
Where: --local is make run's stack (its emulators, found in .parley/local.json);
--stack NAME a deployed stack (CloudFormation outputs, your AWS credentials;
PARLEY_STACK sets a default); or name the table and queues with --table and
--inbound-url, --inbound-dlq-url, --outbound-url, --outbound-dlq-url.
parley COMMAND -h prints a command's usage. Exit status: 0 done, 1 failed or
refused, 2 usage or ambiguous input, 3 needs --yes.`)
}

// cli runs one verb and returns the exit status.
func cli(ctx context.Context, stdout, stderr io.Writer, getenv func(string) string, args []string) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	// Where-flags may come before the verb too.
	var pre []string
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch args[0] {
		case "-h", "-help", "--help":
			usage(stdout)
			return exitOK
		}
		pre = append(pre, args[0])
		args = args[1:]
		if len(args) > 0 && !strings.HasPrefix(args[0], "-") && takesValue(pre[len(pre)-1]) {
			pre = append(pre, args[0])
			args = args[1:]
		}
	}
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	verb, rest := args[0], append(pre, args[1:]...)
	if verb == "help" {
		usage(stdout)
		return exitOK
	}
	for _, c := range commands {
		if c.name == verb {
			return c.run(ctx, stdout, stderr, getenv, rest)
		}
	}
	var names []string
	for _, c := range commands {
		names = append(names, c.name)
	}
	fmt.Fprintf(stderr, "parley: unknown command %q: want %s (parley -h lists them)\n", verb, strings.Join(names, ", "))
	return exitUsage
}

// takesValue reports whether a where-flag before the verb takes a value.
func takesValue(f string) bool {
	if strings.Contains(f, "=") {
		return false
	}
	switch strings.TrimLeft(f, "-") {
	case "local", "json", "yes":
		return false
	}
	return true
}

func (c command) run(ctx context.Context, stdout, stderr io.Writer, getenv func(string) string, args []string) int {
	fs := flag.NewFlagSet("parley "+c.name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	w := where{}
	w.flags(fs, getenv)
	asJSON := fs.Bool("json", false, "print JSON")
	do := c.flags(fs)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: parley %s %s [--local | --stack NAME] [--json]\n\n%s\n\n", c.name, c.args, c.doc)
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(stdout)
		fs.Usage()
		return exitOK
	}
	if err != nil {
		return exitUsage
	}
	if len(pos) < c.min || len(pos) > c.max {
		fmt.Fprintf(stderr, "parley %s: want %s, got %q\n", c.name, cmp.Or(c.args, "no arguments"), pos)
		return exitUsage
	}
	op, err := w.operator(ctx, getenv)
	if err != nil {
		fmt.Fprintf(stderr, "parley %s: %v\n", c.name, err)
		return exitUsage
	}
	e := &env{op: op, out: stdout, asJSON: *asJSON}
	v, err := do(ctx, e, pos)
	if v != nil && e.asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(v)
	}
	var confirm *operator.ConfirmError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &confirm):
		fmt.Fprintf(stderr, "parley %s: not done. %s\nRun it again with --yes to resend all the same.\n", c.name, confirm.Risk)
		return exitNeedsYes
	case errors.Is(err, operator.ErrAmbiguous):
		fmt.Fprintf(stderr, "parley %s: %v; nothing changed\n", c.name, err)
		return exitUsage
	default:
		fmt.Fprintf(stderr, "parley %s: %v\n", c.name, err)
		return exitFailed
	}
}

// parseInterspersed parses flags wherever they are among the arguments,
// and returns the positional ones.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func messageCmd(fs *flag.FlagSet) func(ctx context.Context, e *env, args []string) (any, error) {
	return func(ctx context.Context, e *env, args []string) (any, error) {
		tl, err := e.op.Message(ctx, args[0])
		if err != nil {
			return nil, err
		}
		if !e.asJSON {
			operator.WriteTimeline(e.out, tl)
		}
		return tl, nil
	}
}

func threadCmd(fs *flag.FlagSet) func(ctx context.Context, e *env, args []string) (any, error) {
	return func(ctx context.Context, e *env, args []string) (any, error) {
		msgs, tls, err := e.op.Thread(ctx, args[0])
		if err != nil {
			return nil, err
		}
		if !e.asJSON {
			fmt.Fprintf(e.out, "thread %s: %d message(s)\n\n", args[0], len(msgs))
			for _, tl := range tls {
				operator.WriteTimeline(e.out, tl)
				fmt.Fprintln(e.out)
			}
		}
		return map[string]any{"thread": args[0], "messages": tls}, nil
	}
}

func attentionCmd(fs *flag.FlagSet) func(ctx context.Context, e *env, args []string) (any, error) {
	return func(ctx context.Context, e *env, args []string) (any, error) {
		items, notes, err := e.op.Attention(ctx)
		if err != nil {
			return nil, err
		}
		if !e.asJSON {
			operator.WriteAttention(e.out, items, notes)
		}
		return map[string]any{"items": items, "notes": notes}, nil
	}
}

func resendCmd(fs *flag.FlagSet) func(ctx context.Context, e *env, args []string) (any, error) {
	yes := fs.Bool("yes", false, "resend even where the person may see a copy (a unit whose earlier send may have arrived)")
	return func(ctx context.Context, e *env, args []string) (any, error) {
		d, err := e.op.Resend(ctx, args[0], *yes)
		if err != nil {
			return nil, err
		}
		if !e.asJSON {
			operator.WriteDecision(e.out, d)
		}
		return d, nil
	}
}

func abandonCmd(fs *flag.FlagSet) func(ctx context.Context, e *env, args []string) (any, error) {
	return func(ctx context.Context, e *env, args []string) (any, error) {
		d, err := e.op.Abandon(ctx, args[0])
		if err != nil {
			return nil, err
		}
		if !e.asJSON {
			operator.WriteDecision(e.out, d)
		}
		return d, nil
	}
}

func dlqCmd(fs *flag.FlagSet) func(ctx context.Context, e *env, args []string) (any, error) {
	maxAge := fs.Duration("max-age", 0, "redrive: the oldest a message may have been made (received, planned) and still be replayed, e.g. 1h")
	return func(ctx context.Context, e *env, args []string) (any, error) {
		switch args[0] {
		case "list":
			msgs, peek, err := e.op.DeadLetters(ctx, args[1])
			if err != nil {
				return nil, err
			}
			if !e.asJSON {
				operator.WriteDeadLetters(e.out, args[1], msgs, peek)
			}
			return map[string]any{"queue": args[1], "messages": msgs, "peek": peek}, nil
		case "redrive":
			if *maxAge <= 0 {
				return nil, fmt.Errorf("%w: redrive needs --max-age D: how old a message may be and still be replayed into its conversation (e.g. --max-age 1h)", operator.ErrAmbiguous)
			}
			r, err := e.op.Redrive(ctx, args[1], *maxAge)
			var refused *operator.RefusedError
			if errors.As(err, &refused) {
				r = refused.Result
			} else if err != nil {
				return nil, err
			}
			if !e.asJSON {
				operator.WriteRedrive(e.out, r)
			}
			return r, err
		}
		return nil, fmt.Errorf("%w: dlq %q: want list or redrive", operator.ErrAmbiguous, args[0])
	}
}

func statusCmd(fs *flag.FlagSet) func(ctx context.Context, e *env, args []string) (any, error) {
	return func(ctx context.Context, e *env, args []string) (any, error) {
		st, err := e.op.Status(ctx)
		if err != nil {
			return nil, err
		}
		if !e.asJSON {
			operator.WriteStatus(e.out, st)
		}
		return st, nil
	}
}

func eraseHistoryCmd(fs *flag.FlagSet) func(ctx context.Context, e *env, args []string) (any, error) {
	return func(ctx context.Context, e *env, args []string) (any, error) {
		d, err := e.op.EraseHistory(ctx, args[0])
		if err != nil {
			return nil, err
		}
		if !e.asJSON {
			fmt.Fprintf(e.out, "erased the history of %s\n", d.Thread)
		}
		return d, nil
	}
}

// setenv sets the process's environment: the AWS SDK's standard
// variables, which reach make run's emulators.
var setenv = os.Setenv
