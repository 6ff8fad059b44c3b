package main

import (
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/emulatortest"
	"github.com/parleyhq/parley/localstack/syncbuf"
	"github.com/parleyhq/parley/shared/history"
	"github.com/parleyhq/parley/shared/resources"
	"github.com/parleyhq/parley/shared/store"
	"github.com/parleyhq/parley/shared/store/dynamostore"
)

// TestEraseHistoryVerb: the operator's erase forgets one thread's history,
// on the table PARLEY_TABLE names, found through the SDK's standard
// environment; a malformed thread key or a missing table is refused before
// any call.
func TestEraseHistoryVerb(t *testing.T) {
	t.Parallel()
	env := emulatortest.New(t)
	st := dynamostore.New(env.DynamoDB, env.Resources.Table)
	now := time.Now()
	for _, k := range []string{"telegram:1:42", "telegram:1:43"} {
		rec := store.History{ThreadKey: k, Entries: []history.Entry{{ID: "e", Role: history.RolePerson, Kind: history.KindMessage, Time: now}}}
		if err := st.PutHistory(t.Context(), rec, now, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	vars := map[string]string{resources.EnvTable: env.Resources.Table}
	getenv := func(k string) string { return vars[k] }
	var out syncbuf.Buffer
	for _, bad := range [][]string{{"telegram:1:*"}, {}, {"a", "b"}} {
		if err := cli(t.Context(), &out, getenv, append([]string{"erase-history"}, bad...)); err == nil {
			t.Errorf("erase-history %v: accepted", bad)
		}
	}
	if err := cli(t.Context(), &out, func(string) string { return "" }, []string{"erase-history", "telegram:1:42"}); err == nil || !strings.Contains(err.Error(), resources.EnvTable) {
		t.Errorf("without a table: %v, want a refusal naming %s", err, resources.EnvTable)
	}
	if err := cli(t.Context(), &out, getenv, []string{"erase-history", "telegram:1:42"}); err != nil {
		t.Fatalf("erase-history: %v\n%s", err, out.String())
	}
	for k, want := range map[string]int64{"telegram:1:42": 0, "telegram:1:43": 1} {
		if h, err := st.GetHistory(t.Context(), k, now); err != nil || h.Version != want {
			t.Errorf("%s after the erase: version %d, %v; want %d", k, h.Version, err, want)
		}
	}
}

func TestMain(m *testing.M) { emulatortest.Main(m) }
