package events

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform"
)

// githubPayload holds the few fields of any GitHub event that make its
// one-line summary; the whole payload goes to the agent as data.
type githubPayload struct {
	Action     string `json:"action"`
	Ref        string `json:"ref"`
	Repository *struct {
		FullName string `json:"full_name"`
	} `json:"repository"`
	Sender *struct {
		Login string `json:"login"`
	} `json:"sender"`
	Issue       *githubItem `json:"issue"`
	PullRequest *githubItem `json:"pull_request"`
	Commits     []struct{}  `json:"commits"`
}

type githubItem struct {
	Number int64  `json:"number"`
	Title  string `json:"title"`
}

// parseGitHub reads a GitHub delivery. Its id is the hash of the body, what
// GitHub's signature covers: X-GitHub-Delivery is not signed, so a captured
// delivery re-posted under a new delivery id is the same event, a duplicate,
// however late (GitHub sends no timestamp to refuse it by). Its target is its
// source's one configured target: nothing unsigned (the URL, a header)
// chooses it.
func (r *Receiver) parseGitHub(req *platform.Request, verified []*Source) (platform.Parsed, error) {
	src := verified[0] // GitHub sources never share a secret (Validate)
	if req.Query.Has(QueryTarget) {
		return platform.Parsed{}, fmt.Errorf("%w: ?%s is not accepted: GitHub's signature does not cover the URL; the source's target is configured (PARLEY_GITHUB_TARGET, PARLEY_EVENTS_SOURCES)",
			platform.ErrMalformed, QueryTarget)
	}
	sum := sha256.Sum256(req.Body)
	id := hex.EncodeToString(sum[:16])
	kind := req.Header.Get(HeaderGitHubEvent)
	if !validSource(kind) {
		return platform.Parsed{}, fmt.Errorf("%w: %s must name the event (push, issues, ...)", platform.ErrMalformed, HeaderGitHubEvent)
	}
	if kind == reasonPing {
		// Sent once when the webhook is created; nothing for the agent.
		return platform.Parsed{Ignored: []platform.Ignored{{Reason: reasonPing, ID: id}}}, nil
	}
	body := bytes.TrimSpace(req.Body)
	if len(body) == 0 || body[0] != '{' {
		return platform.Parsed{}, fmt.Errorf("%w: body must be a JSON object (set the webhook's content type to application/json)", platform.ErrMalformed)
	}
	if len(body) > MaxDataLen*4 {
		return platform.Parsed{}, fmt.Errorf("%w: GitHub payload larger than %d bytes", platform.ErrTooLarge, MaxDataLen*4)
	}
	var summary githubPayload
	if err := json.Unmarshal(body, &summary); err != nil {
		return platform.Parsed{}, fmt.Errorf("%w: body: %s", platform.ErrMalformed, jsonProblem(err))
	}
	data, err := decodeAny(body)
	if err != nil {
		return platform.Parsed{}, err
	}
	sender := message.Sender{ID: src.Name, Name: src.Name}
	if summary.Sender != nil && summary.Sender.Login != "" {
		sender.Name = summary.Sender.Login
	}
	return platform.Parsed{Events: []message.Event{{
		Platform: message.Events, Account: src.Name, EventID: id, Kind: message.KindProactive,
		Thread: src.Targets[0].Thread, Sender: sender, Text: summary.text(kind), Time: req.Now.UTC(),
		Data: map[string]any{"github_event": kind, "payload": data},
	}}}, nil
}

func decodeAny(body []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, fmt.Errorf("%w: body must be a JSON object", platform.ErrMalformed)
	}
	return m, nil
}

// text is a one-line summary for the agent: "GitHub issues opened in
// octo/hello: #12 Crash on start".
func (p githubPayload) text(kind string) string {
	var b strings.Builder
	b.WriteString("GitHub ")
	b.WriteString(kind)
	if p.Action != "" {
		b.WriteString(" " + p.Action)
	}
	if p.Repository != nil && p.Repository.FullName != "" {
		b.WriteString(" in " + p.Repository.FullName)
	}
	item := p.Issue
	if p.PullRequest != nil {
		item = p.PullRequest
	}
	switch {
	case item != nil:
		b.WriteString(": #" + strconv.FormatInt(item.Number, 10) + " " + item.Title)
	case kind == "push" && p.Ref != "":
		b.WriteString(": " + strconv.Itoa(len(p.Commits)) + " commit(s) to " + p.Ref)
	}
	s := b.String()
	if len(s) > MaxTextLen {
		s = s[:MaxTextLen]
	}
	return strings.ToValidUTF8(s, "")
}
