package dynamostore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/store"
)

type awaitItem struct {
	PK         string         `dynamodbav:"pk"`
	Kind       string         `dynamodbav:"kind"`
	TurnID     string         `dynamodbav:"id"`
	Thread     message.Thread `dynamodbav:"thread"`
	EventKey   string         `dynamodbav:"event"`
	ClaimKey   string         `dynamodbav:"claim"`
	ClaimOwner string         `dynamodbav:"owner"`
	Deadline   int64          `dynamodbav:"deadline"`
	State      string         `dynamodbav:"st"`
	Handle     string         `dynamodbav:"handle,omitempty"`
	PostID     string         `dynamodbav:"post,omitempty"`
	PostType   string         `dynamodbav:"post_type,omitempty"`
	PostBody   []byte         `dynamodbav:"post_body,omitempty"`
	PostAt     int64          `dynamodbav:"post_at,omitempty"`
	PostEdit   string         `dynamodbav:"post_edit,omitempty"`
	Posts      map[string]int `dynamodbav:"posts"`
	Bubbles    int            `dynamodbav:"bubbles"`
	CreatedAt  int64          `dynamodbav:"created_at"`
	ExpiresAt  int64          `dynamodbav:"expires_at"`
	// The preview's base (message.Preview as JSON) and throttle.
	PvBase string `dynamodbav:"pv_base,omitempty"`
	PvN    int    `dynamodbav:"pv_n,omitempty"`
	PvNext int64  `dynamodbav:"pv_next,omitempty"`
	PvBusy int64  `dynamodbav:"pv_busy,omitempty"`
	// The preview's lease, settler and status flag (store.Await).
	PvLease string `dynamodbav:"pv_lease,omitempty"`
	PvDone  string `dynamodbav:"pv_done,omitempty"`
	PvStat  bool   `dynamodbav:"pv_stat,omitempty"`
	// Token is the write token of the record's last write.
	Token string `dynamodbav:"wt,omitempty"`
}

func previewBase(p message.Preview) (string, error) {
	if p.Thread.Platform == "" {
		return "", nil
	}
	b, err := json.Marshal(p)
	if err != nil {
		return "", fmt.Errorf("encode preview base: %w", err)
	}
	return string(b), nil
}

func awaitFrom(item attrs) (store.Await, error) {
	var it awaitItem
	if err := attributevalue.UnmarshalMap(item, &it); err != nil {
		return store.Await{}, fmt.Errorf("decode await item: %w", err)
	}
	var base message.Preview
	if it.PvBase != "" {
		if err := json.Unmarshal([]byte(it.PvBase), &base); err != nil {
			return store.Await{}, fmt.Errorf("decode await preview base: %w", err)
		}
	}
	var next, busy time.Time
	if it.PvNext != 0 {
		next = fromMillis(it.PvNext)
	}
	if it.PvBusy != 0 {
		busy = fromMillis(it.PvBusy)
	}
	return store.Await{
		Preview: base, PreviewUpdates: it.PvN, PreviewNext: next, PreviewBusy: busy,
		PreviewLease: it.PvLease, PreviewSettled: it.PvDone, PreviewStatus: it.PvStat,
		TurnID: it.TurnID, Thread: it.Thread, EventKey: it.EventKey, ClaimKey: it.ClaimKey, ClaimOwner: it.ClaimOwner,
		Deadline: fromMillis(it.Deadline), State: store.AwaitState(it.State), Handle: it.Handle,
		Post:  store.AwaitPost{ID: it.PostID, ContentType: it.PostType, Body: it.PostBody, At: fromMillis(it.PostAt), Replaces: it.PostEdit},
		Posts: it.Posts, Bubbles: it.Bubbles,
		CreatedAt: fromMillis(it.CreatedAt), ExpiresAt: fromMillis(it.ExpiresAt * 1000),
	}, nil
}

// OpenAwait records that a turn waits for its agent's post, unless it is
// recorded already (a re-run turn): then the record as it is is returned,
// and created is false.
func (s *Store) OpenAwait(ctx context.Context, a store.Await) (store.Await, bool, error) {
	a.State = store.AwaitOpen
	a.Post = store.AwaitPost{}
	tok := newToken()
	base, err := previewBase(a.Preview)
	if err != nil {
		return store.Await{}, false, err
	}
	item, err := attributevalue.MarshalMap(awaitItem{
		PvBase: base,
		PK:     store.AwaitKey(a.TurnID), Kind: "await", TurnID: a.TurnID, Thread: a.Thread, EventKey: a.EventKey,
		ClaimKey: a.ClaimKey, ClaimOwner: a.ClaimOwner, Deadline: millis(a.Deadline), State: string(a.State), Handle: a.Handle,
		CreatedAt: millis(a.CreatedAt), ExpiresAt: a.ExpiresAt.Unix(),
		// An empty map, so a post's entry can be set by its path.
		Posts: map[string]int{}, Token: tok,
	})
	if err != nil {
		return store.Await{}, false, fmt.Errorf("encode await: %w", err)
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: s.table, Item: item,
		ConditionExpression:                 aws.String("attribute_not_exists(#pk)"),
		ExpressionAttributeNames:            map[string]string{"#pk": "pk"},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if old, ok := conflictItem(err); ok {
		cur, err := awaitFrom(old)
		return cur, err == nil && ownWrite(old, tokenAttr, tok), err
	}
	if err != nil {
		return store.Await{}, false, wrap("open await", err)
	}
	return a, true, nil
}

// GetAwait reads a turn's await record, consistently; store.ErrNotFound
// when there is none.
func (s *Store) GetAwait(ctx context.Context, turnID string) (store.Await, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: s.table, Key: s.key(store.AwaitKey(turnID)), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return store.Await{}, wrap("get await", err)
	}
	if len(out.Item) == 0 {
		return store.Await{}, fmt.Errorf("await %s: %w", turnID, store.ErrNotFound)
	}
	return awaitFrom(out.Item)
}

// SetAwaitHandle records the receipt handle of the waiting turn's latest
// receive, while the record is open.
func (s *Store) SetAwaitHandle(ctx context.Context, turnID, handle string) error {
	_, err := s.awaitUpdate(ctx, turnID, "SET #handle = :handle", "", map[string]string{"#handle": "handle"},
		attrs{":handle": str(handle)})
	return err
}

// FinishAwait records the agent's final post, if the record is open and its
// deadline is after now. Otherwise a *store.AwaitConflictError holds the
// record as it is (a retried post finds its own post there).
func (s *Store) FinishAwait(ctx context.Context, turnID string, post store.AwaitPost, now time.Time) (store.Await, error) {
	if len(post.Body) == 0 {
		return store.Await{}, fmt.Errorf("await %s: %w: a post with no body", turnID, store.ErrInvalid)
	}
	return s.awaitUpdate(ctx, turnID,
		"SET #st = :final, #post = :post, #ptype = :ptype, #pbody = :pbody, #pat = :pat, #pedit = :pedit", "#deadline > :now",
		map[string]string{"#post": "post", "#ptype": "post_type", "#pbody": "post_body", "#pat": "post_at", "#pedit": "post_edit", "#deadline": "deadline"},
		attrs{
			":final": str(string(store.AwaitFinal)), ":post": str(post.ID), ":ptype": str(post.ContentType),
			":pbody": &types.AttributeValueMemberB{Value: post.Body}, ":pat": num(millis(post.At)), ":pedit": str(post.Replaces), ":now": num(millis(now)),
		})
}

// AddAwaitPost records a sequential post and the bubbles it was allowed,
// if the record is open, before its deadline, still at prevBubbles (no
// other post in between) and without this post. Otherwise a
// *store.AwaitConflictError holds the record as it is.
func (s *Store) AddAwaitPost(ctx context.Context, turnID, postID string, bubbles, prevBubbles int, now time.Time) (store.Await, error) {
	return s.awaitUpdate(ctx, turnID,
		"SET #bubbles = :bubbles, #posts.#post = :n", "#deadline > :now AND #bubbles = :prev AND attribute_not_exists(#posts.#post)",
		map[string]string{"#bubbles": "bubbles", "#posts": "posts", "#post": postID, "#deadline": "deadline"},
		attrs{
			":bubbles": num(int64(prevBubbles + bubbles)), ":n": num(int64(bubbles)), ":prev": num(int64(prevBubbles)), ":now": num(millis(now)),
		})
}

// TakeAwaitPreview takes one preview update (store.PreviewTake) with one
// conditional write, so that previews posted to any number of invocations
// keep the interval, the cap and one update at a time between them.
// Otherwise a *store.AwaitConflictError holds the record as it is: closed,
// settled, throttled (PreviewNext after Now), busy (another update's lease
// holds) or at the cap.
func (s *Store) TakeAwaitPreview(ctx context.Context, turnID string, t store.PreviewTake) (store.Await, error) {
	if t.Lease == "" {
		return store.Await{}, fmt.Errorf("await %s: %w: a preview take with no lease", turnID, store.ErrInvalid)
	}
	update := "SET #pvn = if_not_exists(#pvn, :zero) + :one, #pvnext = :next, #pvbusy = :busy, #pvlease = :lease"
	values := attrs{
		":zero": num(0), ":one": num(1), ":next": num(millis(t.Next)), ":busy": num(millis(t.Busy)), ":lease": str(t.Lease),
		":now": num(millis(t.Now)), ":max": num(int64(t.Max)),
	}
	names := map[string]string{"#pvn": "pv_n", "#pvnext": "pv_next", "#pvbusy": "pv_busy", "#pvlease": "pv_lease", "#pvdone": "pv_done", "#deadline": "deadline"}
	if t.Status {
		update += ", #pvstat = :true"
		names["#pvstat"], values[":true"] = "pv_stat", &types.AttributeValueMemberBOOL{Value: true}
	}
	return s.awaitUpdate(ctx, turnID, update,
		"#deadline > :now AND attribute_not_exists(#pvdone) AND (attribute_not_exists(#pvlease) OR #pvbusy <= :now)"+
			" AND (attribute_not_exists(#pvnext) OR #pvnext <= :now) AND (attribute_not_exists(#pvn) OR #pvn < :max)",
		names, values)
}

// ReleaseAwaitPreview ends the preview update lease names, so that the next
// update or the settler need not wait for its bound. A lease that is no
// longer lease's (its bound passed and a settler or another update took
// it) gives a *store.AwaitConflictError.
func (s *Store) ReleaseAwaitPreview(ctx context.Context, turnID, lease string) error {
	_, err := s.awaitWrite(ctx, turnID, "REMOVE #pvlease", "#pvlease = :lease",
		map[string]string{"#pvlease": "pv_lease"}, attrs{":lease": str(lease)})
	return err
}

// SettleAwaitPreview makes by the settler of a turn's preview (the turn,
// store.SettledByTurn, or a sequential post, store.SettledByPost): no
// update is taken after it. It waits for nothing: while another update's
// lease holds (until its PreviewBusy) it gives a *store.AwaitConflictError
// holding the record, and the caller tries again; so does a record another
// settler settled. Settling again as the same settler succeeds, so a
// retried turn or post settles the same preview. The record may be in any
// state: the turn settles after its final post or its deadline.
func (s *Store) SettleAwaitPreview(ctx context.Context, turnID, by string, now, busy time.Time) (store.Await, error) {
	return s.awaitWrite(ctx, turnID, "SET #pvdone = :by, #pvlease = :by, #pvbusy = :busy",
		"(attribute_not_exists(#pvdone) OR #pvdone = :by) AND (attribute_not_exists(#pvlease) OR #pvbusy <= :now OR #pvlease = :by)",
		map[string]string{"#pvdone": "pv_done", "#pvlease": "pv_lease", "#pvbusy": "pv_busy"},
		attrs{":by": str(by), ":busy": num(millis(busy)), ":now": num(millis(now))})
}

// ExpireAwait ends an open record whose turn stopped waiting.
func (s *Store) ExpireAwait(ctx context.Context, turnID string) (store.Await, error) {
	return s.awaitUpdate(ctx, turnID, "SET #st = :expired", "", nil,
		attrs{":expired": str(string(store.AwaitExpired))})
}

// awaitUpdate applies update to an open record (and extra, when set).
func (s *Store) awaitUpdate(ctx context.Context, turnID, update, extra string, names map[string]string, values attrs) (store.Await, error) {
	if names == nil {
		names = map[string]string{}
	}
	names["#st"] = "st"
	values[":open"] = str(string(store.AwaitOpen))
	cond := "#st = :open"
	if extra != "" {
		cond += " AND " + extra
	}
	return s.awaitWrite(ctx, turnID, update, cond, names, values)
}

// awaitWrite applies update to an existing record on cond (when set).
func (s *Store) awaitWrite(ctx context.Context, turnID, update, extra string, names map[string]string, values attrs) (store.Await, error) {
	n := map[string]string{"#pk": "pk", "#wt": tokenAttr}
	for k, v := range names {
		n[k] = v
	}
	tok := newToken()
	values[":wt"] = str(tok)
	cond := "attribute_exists(#pk)"
	if extra != "" {
		cond += " AND " + extra
	}
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: s.key(store.AwaitKey(turnID)),
		UpdateExpression: aws.String(stamp(update)), ConditionExpression: aws.String(cond),
		ExpressionAttributeNames: n, ExpressionAttributeValues: values,
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if old, ok := conflictItem(err); ok {
		if len(old) == 0 {
			return store.Await{}, fmt.Errorf("await %s: %w", turnID, store.ErrNotFound)
		}
		cur, err := awaitFrom(old)
		if err != nil {
			return store.Await{}, err
		}
		if ownWrite(old, tokenAttr, tok) {
			return cur, nil
		}
		return store.Await{}, &store.AwaitConflictError{Current: cur}
	}
	if err != nil {
		return store.Await{}, wrap("update await", err)
	}
	return awaitFrom(out.Attributes)
}
