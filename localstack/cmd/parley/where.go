package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/parleyhq/parley/localstack/localstate"
	"github.com/parleyhq/parley/shared/operator"
	"github.com/parleyhq/parley/shared/resources"
)

// where is the stack a command works on: make run's, a deployed one by
// its outputs, or one named by flags.
type where struct {
	local                               bool
	state, stack, region                string
	table, inURL, inDLQ, outURL, outDLQ string
}

func (w *where) flags(fs *flag.FlagSet, getenv func(string) string) {
	fs.BoolVar(&w.local, "local", false, "make run's stack, on its emulators")
	fs.StringVar(&w.state, "local-state", localstate.Path, "where make run says where its stack is")
	fs.StringVar(&w.stack, "stack", getenv("PARLEY_STACK"), "a deployed stack's CloudFormation name (default PARLEY_STACK)")
	fs.StringVar(&w.region, "region", "", "the deployed stack's region (default: your AWS configuration's)")
	fs.StringVar(&w.table, "table", "", "the state table's name, with the four queue URLs, instead of --stack")
	fs.StringVar(&w.inURL, "inbound-url", "", "inbound.fifo's URL (with --table)")
	fs.StringVar(&w.inDLQ, "inbound-dlq-url", "", "inbound.fifo's dead-letter queue's URL (with --table)")
	fs.StringVar(&w.outURL, "outbound-url", "", "outbound.fifo's URL (with --table)")
	fs.StringVar(&w.outDLQ, "outbound-dlq-url", "", "outbound.fifo's dead-letter queue's URL (with --table)")
}

// operator builds the operator for the stack w names: exactly one of
// --local, --stack (or PARLEY_STACK) and --table.
func (w *where) operator(ctx context.Context, getenv func(string) string) (*operator.Operator, error) {
	var modes []string
	if w.local {
		modes = append(modes, "--local")
	}
	if w.table != "" {
		modes = append(modes, "--table")
	}
	// PARLEY_STACK is only a default: --local or --table names another.
	onlyDefault := w.stack == getenv("PARLEY_STACK") && (w.local || w.table != "")
	if w.stack != "" && !onlyDefault {
		modes = append(modes, "--stack")
	}
	if len(modes) != 1 {
		if len(modes) == 0 {
			return nil, errors.New("say which stack: --local (make run's), --stack NAME (a deployed one; or set PARLEY_STACK), or --table with the queue URLs")
		}
		return nil, fmt.Errorf("say one stack, not %s", strings.Join(modes, " and "))
	}
	var opts []func(*awsconfig.LoadOptions) error
	var target operator.Target
	switch modes[0] {
	case "--local":
		st, err := localstate.Read(w.state)
		if err != nil {
			return nil, err
		}
		// The SDK reaches the emulators through its standard variables,
		// as the functions do.
		for _, kv := range st.Env {
			k, v, _ := strings.Cut(kv, "=")
			if err := setenv(k, v); err != nil {
				return nil, err
			}
		}
		if target, err = operator.TargetFromEnv(st.Getenv, st.Log); err != nil {
			return nil, fmt.Errorf("%s: %w", w.state, err)
		}
	case "--table":
		env := map[string]string{resources.EnvTable: w.table,
			resources.Inbound.EnvURL: w.inURL, resources.Inbound.EnvDLQURL: w.inDLQ,
			resources.Outbound.EnvURL: w.outURL, resources.Outbound.EnvDLQURL: w.outDLQ}
		var err error
		if target, err = operator.TargetFromEnv(func(k string) string { return env[k] }, ""); err != nil {
			return nil, fmt.Errorf("--table needs --inbound-url, --inbound-dlq-url, --outbound-url and --outbound-dlq-url: %w", err)
		}
	}
	if w.region != "" {
		opts = append(opts, awsconfig.WithRegion(w.region))
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("AWS configuration: %w", err)
	}
	if modes[0] == "--stack" {
		if target, err = stackTarget(ctx, cloudformation.NewFromConfig(cfg), w.stack); err != nil {
			return nil, err
		}
	}
	op := operator.New(target, dynamodb.NewFromConfig(cfg), sqs.NewFromConfig(cfg))
	if target.Local() {
		return op, nil
	}
	op.Metrics = cloudwatch.NewFromConfig(cfg)
	if len(target.LogGroups) > 0 {
		groups := map[string]string{}
		for fn, g := range target.LogGroups {
			groups[g] = fn
		}
		op.Logs = operator.Insights{Client: cloudwatchlogs.NewFromConfig(cfg), Groups: groups}
	}
	return op, nil
}

// stackTarget reads a deployed stack's outputs.
func stackTarget(ctx context.Context, cfn *cloudformation.Client, name string) (operator.Target, error) {
	out, err := cfn.DescribeStacks(ctx, &cloudformation.DescribeStacksInput{StackName: aws.String(name)})
	if err != nil {
		return operator.Target{}, fmt.Errorf("describe stack %s: %w", name, err)
	}
	if len(out.Stacks) != 1 {
		return operator.Target{}, fmt.Errorf("describe stack %s: %d stacks answer to it", name, len(out.Stacks))
	}
	outputs := map[string]string{}
	for _, o := range out.Stacks[0].Outputs {
		outputs[aws.ToString(o.OutputKey)] = aws.ToString(o.OutputValue)
	}
	t, err := operator.TargetFromOutputs(outputs)
	if err != nil {
		return operator.Target{}, fmt.Errorf("stack %s: %w", name, err)
	}
	return t, nil
}
