// Package ddb calls DynamoDB over its JSON protocol (package awsjson): the
// attribute values and items of its wire format, the five operations the
// store uses (GetItem, PutItem, UpdateItem, DeleteItem, Query), and their
// refusals, a failed condition with the item it found among them.
//
// The SDK's DynamoDB client is generated for every operation of the
// service; its package initialisation, endpoint tables and first
// construction were most of what a function's cold start spent beyond a
// hello world's (ADR 0012). What the store needs of it is this.
//
// Items are encoded from Go structs with MarshalItem and decoded with
// UnmarshalItem, using `dynamodbav` struct tags exactly as the SDK's
// attributevalue package does, so items either one wrote, the other reads.
package ddb
