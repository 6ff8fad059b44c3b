package dynamostore_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/parleyhq/parley/localstack/emulatortest"
	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/store"
	"github.com/parleyhq/parley/shared/store/dynamostore"
)

var mediaOut = flag.Bool("media-out", false, "rewrite testdata/media/intent-v3-media.json from what the store writes")

// mediaFixture is the checked-in media intent: outside testdata/items, whose
// folders hold one item per case for every release (media units are new).
const mediaFixture = "testdata/media/intent-v3-media.json"

func mediaIntent() intent.Intent {
	return fixtureIntent("4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c", []intent.Unit{
		{ID: "b1#1", Content: message.Text("here is the chart"), State: message.UnitSent, Attempt: 1,
			Receipt: []string{"1700000001.000200"}, SentAt: ms(2 * time.Second), UpdatedAt: ms(2 * time.Second)},
		{ID: "chart#1", Content: message.Content{Media: &message.Media{Kind: message.MediaImage, URL: "https://example.com/chart.png?sig=1",
			Name: "chart.png", Caption: "Q3 sales 📈"}}, State: message.UnitSent, Attempt: 1,
			Receipt: []string{"F0FILE0001", "1700000002.000300"}, SentAt: ms(3 * time.Second), UpdatedAt: ms(3 * time.Second)},
		{ID: "note#1", Content: message.Content{Media: &message.Media{Kind: message.MediaVoice, UploadID: "0123456789abcdef0123456789abcdef"}},
			State: message.UnitPending, UpdatedAt: ms(3 * time.Second)},
	})
}

// TestMediaUnitsRead: a media unit keeps its reference in q and its caption
// with the other texts in tx (item version 3 unchanged), and the item the
// store wrote for it, checked in, reads back whole.
func TestMediaUnitsRead(t *testing.T) {
	t.Parallel()
	env := emulatortest.New(t)
	s := dynamostore.New(env.DynamoDB, env.Resources.Table)
	ctx := t.Context()
	want := mediaIntent()
	if _, _, err := s.CreateIntent(ctx, want); err != nil {
		t.Fatal(err)
	}
	wantIntent(want)(t, ctx, s)
	item := rawItem(t, env.DynamoDB, env.Resources.Table, store.IntentKey(want.ID))
	if *mediaOut {
		j, err := itemJSON(item)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.MarshalIndent(j, "", "  ")
		if err := os.MkdirAll(filepath.Dir(mediaFixture), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(mediaFixture, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile(mediaFixture)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := itemFromJSON(raw)
	if err != nil {
		t.Fatal(err)
	}
	other := emulatortest.New(t)
	if _, err := other.DynamoDB.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(other.Resources.Table), Item: stored}); err != nil {
		t.Fatal(err)
	}
	wantIntent(want)(t, ctx, dynamostore.New(other.DynamoDB, other.Resources.Table))
}
