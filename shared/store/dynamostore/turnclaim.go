package dynamostore

import (
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/store"
)

// turnOf is the part of a claim's update expression that writes whose turn
// it is (ClaimSpec.Thread and Origin), adding its names and values: the
// attributes thread and origin, which the claim's intent writes again with
// the same values when it commits. Empty when spec names no thread.
func turnOf(spec store.ClaimSpec, names map[string]string, values attrs) string {
	if spec.Thread.Platform == "" {
		return ""
	}
	th, err := attributevalue.Marshal(spec.Thread)
	if err != nil {
		return "" // strings only: cannot fail
	}
	names["#thread"], names["#origin"] = "thread", "origin"
	values[":thread"], values[":origin"] = th, str(spec.Origin)
	return ", #thread = :thread, #origin = :origin"
}

// turnFrom reads whose turn a claim is; the zero thread when it says none.
func turnFrom(item attrs) (message.Thread, string) {
	v, ok := item["thread"]
	if !ok {
		return message.Thread{}, ""
	}
	var th message.Thread
	if attributevalue.Unmarshal(v, &th) != nil {
		return message.Thread{}, ""
	}
	return th, getS(item, "origin")
}
