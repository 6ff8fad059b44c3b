package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/parleyhq/parley/shared/agentapi"
	"github.com/parleyhq/parley/shared/config"
	"github.com/parleyhq/parley/shared/resources"
	"github.com/parleyhq/parley/shared/store/dynamostore"
)

// eraseHistory is the operator's erase of a thread's transcript: the same
// DeleteItem the agent's POST /history/erase makes, on the table
// PARLEY_TABLE names, through the SDK's default configuration (AWS
// credentials and region, or AWS_ENDPOINT_URL_DYNAMODB for a local stack).
func eraseHistory(ctx context.Context, out io.Writer, getenv config.Getenv, args []string) error {
	fs := flags("erase-history", out)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errors.New("erase-history takes one THREAD_KEY")
	}
	thread := fs.Arg(0)
	body := []byte(`{"thread_key":` + fmt.Sprintf("%q", thread) + `}`)
	if _, err := agentapi.ParseErase(body); err != nil {
		return err
	}
	table := getenv(resources.EnvTable)
	if table == "" {
		return fmt.Errorf("%s is required: the stack's table (its TableName output)", resources.EnvTable)
	}
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return fmt.Errorf("AWS config: %w", err)
	}
	if err := dynamostore.New(dynamodb.NewFromConfig(awsCfg), table).EraseHistory(ctx, thread); err != nil {
		return err
	}
	fmt.Fprintf(out, "erased the history of %s\n", thread)
	return nil
}
