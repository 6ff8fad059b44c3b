package dynamostore

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/parleyhq/parley/shared/intent"
	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/resources"
	"github.com/parleyhq/parley/shared/store"
)

// intentPK is the partition key of an intent item.
func intentPK(id string) string { return store.IntentKey(id) }

// attentionIntent is the attention index's partition for intents with a unit
// an operator should look at (failed, or held in unknown_after_send).
const attentionIntent = "intent"

// itemVersion tags the layout of intent items this code writes. Version 1
// (no attribute) held text units only: a unit's "text". Version 2 adds the
// content kind ("ck", absent for text), a prompt ("q", its JSON) and the
// reply context ("rc"). Version 3 keeps the item small, since every unit
// transition rewrites it and DynamoDB bills a write per KB of the larger of
// the item before and after (ADR 0019): the units' texts move into one
// DEFLATE-compressed attribute ("tx", a JSON array in unit order, "" for a
// unit that is not text), a unit leaves out its fields while they are
// empty, the id is the key's, and the commit drops the claim's owner and
// lease. Readers accept every version, so intents written by earlier
// releases still deliver.
const itemVersion = 3

// maxTexts bounds the units' texts read back, uncompressed: far above what
// a plan may hold (its bubbles' limits), far below what a Lambda holds.
const maxTexts = 4 << 20

type intentItem struct {
	PK string `dynamodbav:"pk"`
	// Version ("v") is written apart (encodeIntent): a number up to
	// version 2, a string since, which the previous release's reader
	// refuses to decode. A function of that release reading a version 3
	// intent mid-deploy fails and retries its record (a new one takes it)
	// rather than send a unit whose text it cannot see.
	Version int    `dynamodbav:"-"`
	Kind    string `dynamodbav:"kind"`
	// ID is absent from version 3 on: the key holds it.
	ID     string         `dynamodbav:"id,omitempty"`
	Origin string         `dynamodbav:"origin"`
	Thread message.Thread `dynamodbav:"thread"`
	Units  []unitItem     `dynamodbav:"units"`
	// Texts is version 3's units' texts (deflateJSON of a []string).
	Texts     []byte     `dynamodbav:"tx,omitempty"`
	CreatedAt int64      `dynamodbav:"created_at"`
	ExpiresAt int64      `dynamodbav:"expires_at"`
	Reply     *replyItem `dynamodbav:"rc,omitempty"`
	// Sequence is intent.Intent.Sequence, absent when 0 (every intent
	// before it: readers of earlier releases ignore it).
	Sequence int `dynamodbav:"seq,omitempty"`
	// Sweep and SweepAt put an open intent on the sweeper's list.
	Sweep   string `dynamodbav:"sw,omitempty"`
	SweepAt int64  `dynamodbav:"sw_at,omitempty"`
	// Token is the write token of the write that created the item
	// (tokenAttr): set by the write, never read into an intent.
	Token string `dynamodbav:"wt,omitempty"`
}

// unitItem is a unit as stored. Short attribute names, and empty fields
// left out (version 3; a transition removes a field it empties): an intent
// holds many, and each byte is billed on every transition.
type unitItem struct {
	ID string `dynamodbav:"id"`
	// Text is a text unit's text up to version 2 (version 3: intentItem.Texts).
	Text string `dynamodbav:"text,omitempty"`
	// ContentKind is absent for text (every version-1 unit).
	ContentKind string `dynamodbav:"ck,omitempty"`
	// Prompt is a question unit's message.Prompt, a reaction unit's
	// message.React (ck "reaction"), or a media unit's message.Media
	// without its caption (ck "media"; the caption is its text in tx), as
	// JSON: the models' own tags version them.
	Prompt     string   `dynamodbav:"q,omitempty"`
	ReplyTo    string   `dynamodbav:"reply_to,omitempty"`
	Parley     bool     `dynamodbav:"o,omitempty"`
	Replaces   string   `dynamodbav:"edit,omitempty"`
	State      string   `dynamodbav:"st"`
	Attempt    int      `dynamodbav:"att"`
	LeaseUntil int64    `dynamodbav:"lease"`
	Receipt    []string `dynamodbav:"rcpt,omitempty"`
	SentAt     int64    `dynamodbav:"sent,omitempty"`
	FailClass  string   `dynamodbav:"fc,omitempty"`
	FailReason string   `dynamodbav:"fr,omitempty"`
	NextAt     int64    `dynamodbav:"next,omitempty"`
	Resent     bool     `dynamodbav:"resent,omitempty"`
	Resends    int      `dynamodbav:"rsn,omitempty"`
	Reported   string   `dynamodbav:"rep,omitempty"`
	UpdatedAt  int64    `dynamodbav:"upd"`
	// Token is the write token of the unit's last transition (tokenAttr).
	Token string `dynamodbav:"wt,omitempty"`
}

// replyItem is a stored message.ReplyContext.
type replyItem struct {
	Token string `dynamodbav:"tok"`
	Until int64  `dynamodbav:"until"`
}

func toItem(in intent.Intent) (intentItem, error) {
	it := intentItem{
		PK: intentPK(in.ID), Version: itemVersion, Kind: "intent", Origin: in.Origin, Thread: in.Thread,
		CreatedAt: millis(in.CreatedAt), ExpiresAt: in.ExpiresAt.Unix(), Sequence: in.Sequence,
	}
	if rc := in.ReplyContext; rc != nil {
		it.Reply = &replyItem{Token: rc.Token, Until: millis(rc.Until)}
	}
	if !in.SweepAt.IsZero() {
		it.Sweep, it.SweepAt = resources.SweepShard, millis(in.SweepAt)
	}
	texts := make([]string, len(in.Units))
	for i, u := range in.Units {
		ui := unitItem{
			ID: u.ID, ReplyTo: u.ReplyTo, Parley: u.Parley, Replaces: u.Replaces, State: string(u.State), Attempt: u.Attempt,
			LeaseUntil: millis(u.LeaseUntil), Receipt: u.Receipt, SentAt: millis(u.SentAt),
			FailClass: string(u.FailureClass), FailReason: u.FailureReason, NextAt: millis(u.NextAt), Resent: u.Resent, Resends: u.Resends,
			Reported: u.Reported, UpdatedAt: millis(u.UpdatedAt),
		}
		switch k := u.Content.Kind(); k {
		case message.ContentText:
			texts[i] = u.Content.Text
		case message.ContentPrompt:
			q, err := json.Marshal(u.Content.Prompt)
			if err != nil {
				return intentItem{}, fmt.Errorf("encode unit %s: %w", u.ID, err)
			}
			ui.ContentKind, ui.Prompt = string(k), string(q)
		case message.ContentReaction:
			// A reaction's JSON rides in q too, under its own kind.
			q, err := json.Marshal(u.Content.React)
			if err != nil {
				return intentItem{}, fmt.Errorf("encode unit %s: %w", u.ID, err)
			}
			ui.ContentKind, ui.Prompt = string(k), string(q)
		case message.ContentMedia:
			// The file's reference rides in q; its caption, text people
			// read, compresses with the other texts in tx.
			m := *u.Content.Media
			texts[i], m.Caption = m.Caption, ""
			q, err := json.Marshal(m)
			if err != nil {
				return intentItem{}, fmt.Errorf("encode unit %s: %w", u.ID, err)
			}
			ui.ContentKind, ui.Prompt = string(k), string(q)
		default:
			return intentItem{}, fmt.Errorf("encode unit %s: %w: no content", u.ID, store.ErrInvalid)
		}
		it.Units = append(it.Units, ui)
	}
	if slices.ContainsFunc(texts, func(t string) bool { return t != "" }) {
		z, err := deflateJSON(texts)
		if err != nil {
			return intentItem{}, fmt.Errorf("encode texts: %w", err)
		}
		it.Texts = z
	}
	return it, nil
}

// content reads a stored unit's content; text is its text (version 3's
// from Texts, else the unit's own). A kind this code does not know
// (written by a later release) reads as empty content, which delivery fails
// visibly rather than send something else.
func (u unitItem) content(text string) message.Content {
	switch message.ContentKind(u.ContentKind) {
	case "", message.ContentText:
		return message.Text(text)
	case message.ContentPrompt:
		var q message.Prompt
		if json.Unmarshal([]byte(u.Prompt), &q) == nil {
			return message.Content{Prompt: &q}
		}
	case message.ContentReaction:
		var r message.React
		if json.Unmarshal([]byte(u.Prompt), &r) == nil {
			return message.Content{React: &r}
		}
	case message.ContentMedia:
		var m message.Media
		if json.Unmarshal([]byte(u.Prompt), &m) == nil && m.Kind != "" {
			m.Caption = text
			return message.Content{Media: &m}
		}
	}
	return message.Content{}
}

func fromItem(item attrs) (intent.Intent, error) {
	var it intentItem
	if err := attributevalue.UnmarshalMap(item, &it); err != nil {
		return intent.Intent{}, fmt.Errorf("decode intent item: %w", err)
	}
	if it.ID == "" {
		it.ID = strings.TrimPrefix(it.PK, intentPK(""))
	}
	texts := make([]string, len(it.Units))
	if len(it.Texts) > 0 {
		if err := inflateJSON(it.Texts, maxTexts, &texts); err != nil || len(texts) != len(it.Units) {
			return intent.Intent{}, fmt.Errorf("decode intent %s: texts of %d units: %d, %v", it.ID, len(it.Units), len(texts), err)
		}
	}
	in := intent.Intent{
		ID: it.ID, Origin: it.Origin, Thread: it.Thread, Sequence: it.Sequence,
		CreatedAt: fromMillis(it.CreatedAt), ExpiresAt: time.Unix(it.ExpiresAt, 0).UTC(),
	}
	if it.Sweep != "" {
		in.SweepAt = fromMillis(it.SweepAt)
	}
	if it.Reply != nil {
		in.ReplyContext = &message.ReplyContext{Token: it.Reply.Token, Until: fromMillis(it.Reply.Until)}
	}
	for i, u := range it.Units {
		if len(u.Receipt) == 0 {
			u.Receipt = nil // up to version 2, an empty list; since, absent
		}
		text := u.Text
		if len(it.Texts) > 0 {
			text = texts[i]
		}
		in.Units = append(in.Units, intent.Unit{
			ID: u.ID, Content: u.content(text), ReplyTo: u.ReplyTo, Parley: u.Parley, Replaces: u.Replaces, State: message.UnitState(u.State), Attempt: u.Attempt,
			LeaseUntil: fromMillis(u.LeaseUntil), Receipt: u.Receipt, SentAt: fromMillis(u.SentAt),
			FailureClass: message.FailureClass(u.FailClass), FailureReason: u.FailReason, NextAt: fromMillis(u.NextAt),
			Resent: u.Resent, Resends: u.Resends, Reported: u.Reported, UpdatedAt: fromMillis(u.UpdatedAt),
		})
	}
	return in, nil
}

// CreateIntent writes in unless an intent with its id exists. It returns the
// stored intent and whether this call created it: a re-run turn gets the
// intent it wrote before, never a second plan.
func (s *Store) CreateIntent(ctx context.Context, in intent.Intent) (intent.Intent, bool, error) {
	item, err := encodeIntent(in)
	if err != nil {
		return intent.Intent{}, false, err
	}
	tok := newToken()
	item[tokenAttr] = str(tok)
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                           s.table,
		Item:                                item,
		ConditionExpression:                 aws.String("attribute_not_exists(pk)"),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	return written(in, tok, err, "create intent")
}

func encodeIntent(in intent.Intent) (attrs, error) {
	it, err := toItem(in)
	if err != nil {
		return nil, err
	}
	item, err := attributevalue.MarshalMap(it)
	if err != nil {
		return nil, fmt.Errorf("encode intent: %w", err)
	}
	item["v"] = str(strconv.Itoa(it.Version))
	return item, nil
}

// written is the outcome of a conditional write of in, stamped with tok:
// created (also when the item found holds tok: this write's own earlier
// attempt created it); or the intent an earlier write left, when the item
// holds one; or the claim that holds the key, when it holds none.
func written(in intent.Intent, tok string, err error, op string) (intent.Intent, bool, error) {
	if old, ok := conflictItem(err); ok {
		if ownWrite(old, tokenAttr, tok) {
			cur, derr := fromItem(old)
			return cur, derr == nil, derr
		}
		if !isIntent(old) {
			return intent.Intent{}, false, &store.ClaimHeldError{Current: claimFrom(intentPK(in.ID), old)}
		}
		cur, derr := fromItem(old)
		return cur, false, derr
	}
	if err != nil {
		return intent.Intent{}, false, wrap(op, err)
	}
	return in, true, nil
}

// CommitIntent writes in onto its turn's claim (the item at its key), and
// settles the claim as done with outcome as its reason, in one conditional
// write: only while owner's claim is pending. The intent keeps the claim's
// attempts and its key until the intent expires, so a redelivered event finds
// the claim settled and its reply in it. When an earlier attempt committed
// already, it returns that intent and false; when the claim is no longer
// owner's and holds no intent, a *store.ClaimHeldError.
func (s *Store) CommitIntent(ctx context.Context, in intent.Intent, owner, outcome string, now time.Time) (intent.Intent, bool, error) {
	item, err := encodeIntent(in)
	if err != nil {
		return intent.Intent{}, false, err
	}
	delete(item, "pk")
	tok := newToken()
	item[tokenAttr] = str(tok)
	item["st"] = str(string(store.ClaimDone))
	item["reason"] = str(outcome)
	item["settled_at"] = num(millis(now))
	names := map[string]string{"#owner": "owner", "#st": "st"}
	values := attrs{":owner": str(owner), ":pending": str(string(store.ClaimPending))}
	set := make([]string, 0, len(item))
	for _, k := range slices.Sorted(maps.Keys(item)) {
		n := "#c_" + k
		if k == "st" {
			n = "#st"
		}
		names[n] = k
		values[":c_"+k] = item[k]
		if k == "sw" || k == "sw_at" {
			// A claim on the sweeper's list keeps its place: the intent
			// is looked at a lease later than it would be, and the
			// sweep index is not written again.
			set = append(set, n+" = if_not_exists("+n+", :c_"+k+")")
			continue
		}
		set = append(set, n+" = :c_"+k)
	}
	// The claim's owner, lease and note mean nothing once it is settled,
	// and every unit transition would pay for their bytes.
	names["#lease"], names["#note"] = "lease_until", "note"
	remove := []string{"#owner", "#lease", "#note"}
	if _, sweeps := item["sw"]; !sweeps {
		// The claim's own place on the sweeper's list ends with it.
		names["#sw"], names["#swat"] = "sw", "sw_at"
		remove = append(remove, "#sw", "#swat")
	}
	update := "SET " + strings.Join(set, ", ") + " REMOVE " + strings.Join(remove, ", ")
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                           s.table,
		Key:                                 s.key(intentPK(in.ID)),
		UpdateExpression:                    aws.String(update),
		ConditionExpression:                 aws.String("#owner = :owner AND #st = :pending"),
		ExpressionAttributeNames:            names,
		ExpressionAttributeValues:           values,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	return written(in, tok, err, "commit intent")
}

// GetIntent reads an intent with a strongly consistent read.
func (s *Store) GetIntent(ctx context.Context, id string) (intent.Intent, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      s.table,
		Key:            s.key(intentPK(id)),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return intent.Intent{}, wrap("get intent", err)
	}
	if !isIntent(out.Item) {
		return intent.Intent{}, fmt.Errorf("intent %s: %w", id, store.ErrNotFound)
	}
	return fromItem(out.Item)
}

// isIntent reports whether item holds an intent: absent, or a turn's claim
// whose plan is not committed yet, it does not.
func isIntent(item attrs) bool {
	return getS(item, "kind") == "intent"
}

// Apply performs t on the intent as one conditional update and returns the
// intent after it. When t's condition does not hold it returns a
// *store.IntentConflictError holding the intent as it is.
func (s *Store) Apply(ctx context.Context, id string, t intent.Transition) (intent.Intent, error) {
	tok := newToken()
	in, err := buildTransition(t, tok)
	if err != nil {
		return intent.Intent{}, err
	}
	in.TableName = s.table
	in.Key = s.key(intentPK(id))
	in.ReturnValues = types.ReturnValueAllNew
	in.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	out, err := s.db.UpdateItem(ctx, in)
	if old, ok := conflictItem(err); ok {
		if !isIntent(old) {
			return intent.Intent{}, fmt.Errorf("intent %s: %w", id, store.ErrNotFound)
		}
		cur, derr := fromItem(old)
		if derr != nil {
			return intent.Intent{}, derr
		}
		if unitToken(old, t.Unit) == tok {
			// This transition's own earlier attempt moved the unit.
			return cur, nil
		}
		return intent.Intent{}, &store.IntentConflictError{Transition: t.Name, Current: cur}
	}
	if err != nil {
		return intent.Intent{}, wrap(t.Name+" unit", err)
	}
	return fromItem(out.Attributes)
}

// unitToken is the write token of unit i's last transition in item.
func unitToken(item attrs, i int) string {
	units, _ := item["units"].(*types.AttributeValueMemberL)
	if units == nil || i < 0 || i >= len(units.Value) {
		return ""
	}
	u, _ := units.Value[i].(*types.AttributeValueMemberM)
	if u == nil {
		return ""
	}
	return getS(u.Value, tokenAttr)
}

// buildTransition renders t as an UpdateItem input: the condition on the
// unit's state, attempt, lease and predecessors, and every field of the
// unit, stamped with the write token tok.
func buildTransition(t intent.Transition, tok string) (*dynamodb.UpdateItemInput, error) {
	if t.Unit < 0 || len(t.From) == 0 {
		return nil, fmt.Errorf("transition %s: invalid unit %d or no source state", t.Name, t.Unit)
	}
	u := fmt.Sprintf("#units[%d]", t.Unit)
	names := map[string]string{
		"#pk": "pk", "#units": "units", "#st": "st", "#att": "att", "#lease": "lease", "#rcpt": "rcpt",
		"#sent": "sent", "#fc": "fc", "#fr": "fr", "#next": "next", "#resent": "resent", "#rsn": "rsn", "#rep": "rep", "#upd": "upd",
		"#wt": tokenAttr,
	}
	receipt := []string{}
	if t.Receipt != nil {
		receipt = t.Receipt
	}
	rc, err := attributevalue.Marshal(receipt)
	if err != nil {
		return nil, fmt.Errorf("encode receipt: %w", err)
	}
	values := attrs{
		":att": num(int64(t.Attempt)), ":to": str(string(t.To)), ":natt": num(int64(t.NextAttempt)),
		":lease": num(millis(t.LeaseUntil)), ":rcpt": rc, ":sent": num(millis(t.SentAt)),
		":fc": str(string(t.FailureClass)), ":fr": str(t.FailureReason), ":next": num(millis(t.NextAt)),
		":resent": &types.AttributeValueMemberBOOL{Value: t.Resent}, ":rsn": num(int64(t.Resends)), ":rep": str(t.Reported), ":upd": num(millis(t.At)),
		":wt": str(tok),
	}

	var from []string
	for i, st := range t.From {
		k := fmt.Sprintf(":from%d", i)
		values[k] = str(string(st))
		from = append(from, k)
	}
	cond := []string{
		"attribute_exists(#pk)",
		fmt.Sprintf("%s.#st IN (%s)", u, strings.Join(from, ", ")),
		u + ".#att = :att",
	}
	if !t.LeaseExpiredBy.IsZero() {
		values[":expby"] = num(millis(t.LeaseExpiredBy))
		cond = append(cond, u+".#lease < :expby")
	}
	if t.UnitID != "" {
		names["#uid"] = "id"
		values[":uid"] = str(t.UnitID)
		cond = append(cond, u+".#uid = :uid")
	}
	if (t.RequirePrevTerminal || t.RequirePrevDone) && t.Unit > 0 {
		values[":tsent"] = str(string(message.UnitSent))
		values[":tfail"] = str(string(message.UnitFailed))
		settled := ":tsent, :tfail"
		if !t.RequirePrevDone {
			values[":tunk"] = str(string(message.UnitUnknown))
			settled += ", :tunk"
		}
		for i := 0; i < t.Unit; i++ {
			cond = append(cond, fmt.Sprintf("#units[%d].#st IN (%s)", i, settled))
		}
	}

	set := []string{u + ".#st = :to", u + ".#att = :natt", u + ".#lease = :lease", u + ".#upd = :upd", u + ".#wt = :wt"}
	// A field the transition empties is removed, not written empty: the
	// item stays as small as its content (version 3; the condition reads
	// only st, att, lease and id, which are always there).
	var remove []string
	for _, f := range []struct {
		name  string
		empty bool
	}{
		{"rcpt", len(receipt) == 0}, {"sent", t.SentAt.IsZero()}, {"fc", t.FailureClass == ""}, {"fr", t.FailureReason == ""},
		{"next", t.NextAt.IsZero()}, {"resent", !t.Resent}, {"rsn", t.Resends == 0}, {"rep", t.Reported == ""},
	} {
		if f.empty {
			remove = append(remove, u+".#"+f.name)
			delete(values, ":"+f.name)
		} else {
			set = append(set, u+".#"+f.name+" = :"+f.name)
		}
	}
	if t.Attention {
		names["#attn"], names["#attnat"] = "attn", "attn_at"
		values[":attn"] = str(attentionIntent)
		values[":attnat"] = str(t.At.UTC().Format(time.RFC3339Nano))
		set = append(set, "#attn = :attn", "#attnat = :attnat")
	}
	switch {
	case t.Close:
		names["#sw"], names["#swat"] = "sw", "sw_at"
		remove = append(remove, "#sw", "#swat")
	case t.Reopen:
		names["#sw"], names["#swat"] = "sw", "sw_at"
		values[":sw"] = str(resources.SweepShard)
		values[":swat"] = num(millis(t.SweepAt))
		set = append(set, "#sw = :sw", "#swat = :swat")
	case !t.SweepAt.IsZero():
		// Only an intent on the list has sw; sw_at alone indexes nothing.
		names["#swat"] = "sw_at"
		values[":swat"] = num(millis(t.SweepAt))
		set = append(set, "#swat = :swat")
	}
	update := "SET " + strings.Join(set, ", ")
	if len(remove) > 0 {
		update += " REMOVE " + strings.Join(remove, ", ")
	}
	return &dynamodb.UpdateItemInput{
		UpdateExpression:          aws.String(update),
		ConditionExpression:       aws.String(strings.Join(cond, " AND ")),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	}, nil
}
