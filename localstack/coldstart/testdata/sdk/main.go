// Command sdk is the cold-start benchmark's baseline: what a user would
// write for a function that uses DynamoDB, SQS and Secrets Manager — the
// SDK's default configuration and the three clients built at init, and a
// handler that calls them. The benchmark's event calls nothing: its init
// is what is measured, and the handler's calls keep their code in the
// binary as a real function's do.
package main

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// request names what the handler does; the benchmark sends {}: nothing.
type request struct {
	Table, Key, Queue, Body, Secret string
}

func main() {
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	db, queue, secrets := dynamodb.NewFromConfig(cfg), sqs.NewFromConfig(cfg), secretsmanager.NewFromConfig(cfg)
	lambda.Start(func(ctx context.Context, r request) (string, error) {
		if r.Secret != "" {
			if _, err := secrets.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(r.Secret)}); err != nil {
				return "", err
			}
		}
		if r.Table != "" {
			key := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: r.Key}}
			if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(r.Table), Item: key,
				ConditionExpression: aws.String("attribute_not_exists(pk)")}); err != nil {
				return "", err
			}
			if _, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(r.Table), Key: key}); err != nil {
				return "", err
			}
		}
		if r.Queue != "" {
			if _, err := queue.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(r.Queue), MessageBody: aws.String(r.Body)}); err != nil {
				return "", err
			}
		}
		return "ok", nil
	})
}
