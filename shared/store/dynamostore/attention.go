package dynamostore

import (
	"context"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/parleyhq/parley/shared/resources"
	"github.com/parleyhq/parley/shared/store"
)

// Attention lists the intents on the attention index, oldest first (by the
// time of the transition that last put a unit there), at most limit: keys
// and times only, whatever the index projects, so a reader gets each
// intent through GetIntent. An intent stays listed after its units were
// settled (a held unit sent after all, an operator's decision): the
// reader asks each unit (intent.Unit.NeedsOperator). The index is
// eventually consistent.
func (s *Store) Attention(ctx context.Context, limit int) ([]store.AttentionEntry, error) {
	var out []store.AttentionEntry
	var start attrs
	for len(out) < limit {
		page, err := s.db.Query(ctx, &dynamodb.QueryInput{
			TableName:                 s.table,
			IndexName:                 aws.String(resources.Attention.Name),
			KeyConditionExpression:    aws.String("#attn = :attn"),
			ProjectionExpression:      aws.String("#pk, #attnat"),
			ExpressionAttributeNames:  map[string]string{"#attn": "attn", "#attnat": "attn_at", "#pk": "pk"},
			ExpressionAttributeValues: attrs{":attn": str(attentionIntent)},
			ExclusiveStartKey:         start,
			Limit:                     aws.Int32(int32(min(limit-len(out), 1000))),
		})
		if err != nil {
			return nil, wrap("query attention index", err)
		}
		for _, it := range page.Items {
			at, _ := time.Parse(time.RFC3339Nano, getS(it, "attn_at"))
			out = append(out, store.AttentionEntry{IntentID: strings.TrimPrefix(getS(it, "pk"), "int#"), At: at})
		}
		if start = page.LastEvaluatedKey; len(start) == 0 {
			break
		}
	}
	return out, nil
}
