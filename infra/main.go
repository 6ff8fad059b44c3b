// Command infra synthesizes Parley's CloudFormation stack. The CDK CLI runs
// it (cdk.json: "go run ."); see package stack for what it defines and which
// context keys it reads.
package main

import (
	"fmt"
	"os"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"

	"github.com/parleyhq/parley/infra/stack"
)

func main() {
	err := run()
	jsii.Close()
	if err != nil {
		fmt.Fprintln(os.Stderr, "parley infra:", err)
		os.Exit(1)
	}
}

func run() error {
	props := &awscdk.AppProps{}
	// The CLI passes CDK_OUTDIR; a plain `go run .` would otherwise
	// synthesize into a temporary directory nobody finds.
	if os.Getenv("CDK_OUTDIR") == "" {
		props.Outdir = jsii.String("cdk.out")
	}
	app := awscdk.NewApp(props)
	awscdk.Aspects_Of(app).Add(stack.Checks(), nil)
	cfg, err := stack.ConfigFromContext(app.Node())
	if err != nil {
		return err
	}
	if _, err := stack.New(app, stack.StackName(app.Node()), nil, cfg); err != nil {
		return err
	}
	app.Synth(nil)
	return nil
}
