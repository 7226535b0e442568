package service

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/causeway/causeway/errcode"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/providers"
)

// githubDeploymentStatus is the part of GitHub's deployment_status event a
// change is built from.
type githubDeploymentStatus struct {
	DeploymentStatus struct {
		ID          int64  `json:"id"`
		State       string `json:"state"`
		Description string `json:"description"`
		Environment string `json:"environment"`
		TargetURL   string `json:"target_url"`
		LogURL      string `json:"log_url"`
		CreatedAt   string `json:"created_at"`
	} `json:"deployment_status"`
	Deployment struct {
		ID          int64          `json:"id"`
		SHA         string         `json:"sha"`
		Ref         string         `json:"ref"`
		Task        string         `json:"task"`
		Environment string         `json:"environment"`
		Description string         `json:"description"`
		CreatedAt   string         `json:"created_at"`
		Payload     map[string]any `json:"payload"`
		Creator     struct {
			Login string `json:"login"`
		} `json:"creator"`
	} `json:"deployment"`
	Repository struct {
		Name     string `json:"name"`
		FullName string `json:"full_name"`
	} `json:"repository"`
	Sender struct {
		Login string `json:"login"`
	} `json:"sender"`
}

// RecordGitHub verifies a GitHub webhook delivery (X-Hub-Signature-256 with the
// key's webhook secret) and records a deployment_status event as a change of
// kind deployment. Every status of one GitHub deployment names the same change:
// the first one recorded creates it, a finished state later sets its end.
// Other events (ping included) are acknowledged and ignored.
func (s *Changes) RecordGitHub(ctx context.Context, k *WebhookKey, h http.Header, body []byte) (*ChangeReceipt, error) {
	sig := h.Values(HeaderGitHubSignature)
	if len(sig) == 0 || !strings.HasPrefix(strings.ToLower(strings.TrimSpace(sig[0])), "sha256=") {
		s.logRejected(k, ChangeSourceGitHub, "missing X-Hub-Signature-256")
		return nil, denyWebhook()
	}
	if err := providers.VerifyHMAC(k.secret, body, sig[0], "", s.now()); err != nil {
		s.logRejected(k, ChangeSourceGitHub, err.Error())
		return nil, denyWebhook()
	}
	event := strings.TrimSpace(h.Get(HeaderGitHubEvent))
	if event != "deployment_status" {
		return &ChangeReceipt{Ignored: true, Reason: "GitHub event " + strconv.Quote(event) + " is not a deployment_status"}, nil
	}
	var ev githubDeploymentStatus
	if err := decodeChange(githubJSON(body), &ev); err != nil {
		return nil, err
	}
	c, reason, err := s.fromGitHub(k.TenantID, &ev)
	if err != nil {
		return nil, err
	}
	if c == nil {
		return &ChangeReceipt{Ignored: true, Reason: reason}, nil
	}
	return s.record(ctx, c)
}

// githubJSON is the JSON of a delivery sent as application/json or, when the
// hook is set to the form content type, as its payload field.
func githubJSON(body []byte) []byte {
	if t := bytes.TrimSpace(body); len(t) > 0 && t[0] == '{' {
		return body
	}
	v, err := url.ParseQuery(string(body))
	if err != nil || v.Get("payload") == "" {
		return body
	}
	return []byte(v.Get("payload"))
}

// fromGitHub maps a deployment_status event to a change, or says why it
// records nothing: a queued or pending deployment has changed nothing yet, and
// an inactive one is GitHub retiring an older deployment.
func (s *Changes) fromGitHub(tenantID string, ev *githubDeploymentStatus) (*models.Change, string, error) {
	st, d := ev.DeploymentStatus, ev.Deployment
	state := strings.ToLower(strings.TrimSpace(st.State))
	switch state {
	case "in_progress", "success", "failure", "error":
	case "":
		return nil, "", errcode.Invalid("deployment_status.state is required")
	default:
		return nil, "deployment state " + strconv.Quote(state) + " records no change", nil
	}
	if d.ID == 0 {
		return nil, "", errcode.Invalid("deployment.id is required")
	}
	if ev.Repository.FullName == "" {
		return nil, "", errcode.Invalid("repository.full_name is required")
	}
	service := payloadString(d.Payload, "service")
	if service == "" {
		service = ev.Repository.Name
	}
	env := d.Environment
	if env == "" {
		env = st.Environment
	}
	c := &models.Change{
		TenantID: tenantID, Source: ChangeSourceGitHub, Kind: models.ChangeDeployment,
		Service: clipRunes(service, maxChangeShort), Environment: clipRunes(env, 100),
		Version:        clipRunes(githubVersion(d.Payload, d.Ref, d.SHA), maxChangeShort),
		Author:         clipRunes(firstSet(d.Creator.Login, ev.Sender.Login), maxChangeShort),
		SourceChangeID: "github:" + ev.Repository.FullName + ":deployment:" + strconv.FormatInt(d.ID, 10),
	}
	c.Description = clipRunes(githubDescription(ev, state), maxChangeDescription)
	if u := firstSet(st.LogURL, st.TargetURL); strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://") {
		c.URL = clipRunes(u, maxChangeURL)
	}
	c.StartedAt = s.now().UTC()
	if t, err := time.Parse(time.RFC3339, d.CreatedAt); err == nil {
		c.StartedAt = t.UTC()
	}
	if state != "in_progress" {
		end := s.now().UTC()
		if t, err := time.Parse(time.RFC3339, st.CreatedAt); err == nil {
			end = t.UTC()
		}
		if end.Before(c.StartedAt) {
			end = c.StartedAt
		}
		c.FinishedAt = &end
	}
	return c, "", nil
}

func githubDescription(ev *githubDeploymentStatus, state string) string {
	d := ev.Deployment
	what := d.Ref
	if what == "" {
		what = shortSHA(d.SHA)
	}
	out := "GitHub deployment of " + ev.Repository.FullName + " " + what
	if env := firstSet(d.Environment, ev.DeploymentStatus.Environment); env != "" {
		out += " to " + env
	}
	out += " (" + state + ")"
	if t := firstSet(ev.DeploymentStatus.Description, d.Description); t != "" {
		out += ": " + t
	}
	return out
}

// githubVersion prefers a version the workflow put in the deployment payload,
// then a ref that is not a branch head's SHA, then the short SHA.
func githubVersion(payload map[string]any, ref, sha string) string {
	if v := payloadString(payload, "version"); v != "" {
		return v
	}
	if ref != "" && ref != sha {
		if s := shortSHA(sha); s != "" {
			return ref + "@" + s
		}
		return ref
	}
	return shortSHA(sha)
}

func payloadString(p map[string]any, key string) string {
	if v, ok := p[key].(string); ok {
		return strings.TrimSpace(v)
	}
	return ""
}

func shortSHA(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

func firstSet(vs ...string) string {
	for _, v := range vs {
		if strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// clip bounds a value GitHub chose to what its column holds, on a rune boundary.
func clipRunes(s string, max int) string {
	if len(s) <= max {
		return s
	}
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	return string(r[:max])
}
