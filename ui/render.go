package ui

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"math"
	"mime"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/api"
	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/identity"
	"github.com/causeway/causeway/models"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// assets are the embedded static files with their content digests, so a page
// links each as name?v=digest and browsers may keep it for a year.
type assets struct {
	files  map[string][]byte
	digest map[string]string
}

func loadAssets() (*assets, error) {
	a := &assets{files: map[string][]byte{}, digest: map[string]string{}}
	err := fs.WalkDir(staticFS, "static", func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := staticFS.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		name := path.Base(p)
		a.files[name], a.digest[name] = b, hex.EncodeToString(sum[:6])
		return nil
	})
	return a, err
}

// url is the versioned address of an asset; an unknown name is a template bug.
func (a *assets) url(name string) (string, error) {
	v, ok := a.digest[name]
	if !ok {
		return "", fmt.Errorf("no static asset %q", name)
	}
	return Prefix + "/static/" + name + "?v=" + v, nil
}

func (d *Dashboard) static(c *gin.Context) {
	name := c.Param("file")
	b, ok := d.assets.files[name]
	if !ok {
		c.String(http.StatusNotFound, "not found")
		return
	}
	etag := `"` + d.assets.digest[name] + `"`
	c.Header("ETag", etag)
	if c.Query("v") == d.assets.digest[name] {
		c.Header("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		c.Header("Cache-Control", "no-cache")
	}
	if c.GetHeader("If-None-Match") == etag {
		c.Status(http.StatusNotModified)
		return
	}
	c.Data(http.StatusOK, mime.TypeByExtension(path.Ext(name)), b)
}

// pages holds one template set per page: the layout, the shared partials, the
// settings frame for a settings section, and the page's own file.
type pages struct{ sets map[string]*template.Template }

func loadPages(a *assets) (*pages, error) {
	files, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	p := &pages{sets: map[string]*template.Template{}}
	for _, f := range files {
		name := strings.TrimSuffix(path.Base(f), ".html")
		if name == "layout" || name == "partials" || name == "settings" {
			continue
		}
		shared := []string{"templates/layout.html", "templates/partials.html"}
		if strings.HasPrefix(name, "settings-") {
			// A settings section fills the settings frame.
			shared = append(shared, "templates/settings.html")
		}
		t, err := template.New(name).Funcs(funcs(a)).ParseFS(templateFS, append(shared, f)...)
		if err != nil {
			return nil, fmt.Errorf("template %s: %w", name, err)
		}
		p.sets[name] = t
	}
	return p, nil
}

// view is what every page template receives.
type view struct {
	Title string
	// Nav names the main section the page belongs to, for aria-current.
	Nav  string
	User *auth.Principal
	CSRF string
	Can  permissions
	// Notice is a confirmation shown once, after a redirect.
	Notice string
	// Problem is the failure the page explains, with its HTTP status.
	Problem *problem
	Data    any
}

// problem is an error as a page shows it.
type problem struct {
	Status  int
	Code    string
	Message string
}

// permissions say which controls to show; the same role sets are checked again
// when the request arrives.
type permissions struct {
	Write  bool
	Manage bool
	Owner  bool
}

func permissionsOf(p auth.Principal) permissions {
	return permissions{
		Write:  identity.RequireRole(p, models.Writers...) == nil,
		Manage: identity.RequireRole(p, models.Managers...) == nil,
		Owner:  p.HasAnyRole("owner"),
	}
}

// page fills the parts of a view every signed-in page shares.
func (d *Dashboard) page(c *gin.Context, title, nav string, data any) *view {
	v := &view{Title: title, Nav: nav, Data: data, Notice: notices[c.Query("notice")]}
	if s, ok := c.Get(ctxSession); ok && s != nil {
		p := principal(c)
		v.User, v.CSRF, v.Can = &p, currentSession(c).CSRF, permissionsOf(p)
	}
	return v
}

// render executes a page's layout into a buffer first, so a template failure
// becomes a clean error page instead of half a page.
func (d *Dashboard) render(c *gin.Context, status int, name string, v *view) {
	d.execute(c, status, name, "layout", v)
}

// renderFragment executes one named template of a page's set: the part of the
// page that the page's script replaces in place.
func (d *Dashboard) renderFragment(c *gin.Context, name, fragment string, v *view) {
	d.execute(c, http.StatusOK, name, fragment, v)
}

func (d *Dashboard) execute(c *gin.Context, status int, name, tmpl string, v *view) {
	t, ok := d.pages.sets[name]
	var buf bytes.Buffer
	var err error
	if !ok {
		err = fmt.Errorf("no page template %q", name)
	} else {
		err = t.ExecuteTemplate(&buf, tmpl, v)
	}
	if err != nil {
		d.o.Log.Error("dashboard template failed", "template", name, "error", err)
		c.String(http.StatusInternalServerError, "The page could not be drawn; the server log has the details.")
		c.Abort()
		return
	}
	c.Data(status, "text/html; charset=utf-8", buf.Bytes())
}

// fail answers a failed request with the API's status and error code for err
// (one error table for both): an error page for a page load, the bare message
// for the page's script.
func (d *Dashboard) fail(c *gin.Context, err error) {
	status, e := api.Describe(c, err)
	if status == http.StatusServiceUnavailable {
		c.Header("Retry-After", "5")
	}
	if isFragment(c) {
		c.String(status, e.Message)
		c.Abort()
		return
	}
	v := d.page(c, errorTitle(status), "", nil)
	v.Problem = &problem{Status: status, Code: e.Code, Message: e.Message}
	d.render(c, status, "error", v)
	c.Abort()
}

// problemOf describes err for a page that shows it beside the form that
// failed, with the status and code the API gives for the same failure.
func problemOf(c *gin.Context, err error) *problem {
	status, e := api.Describe(c, err)
	return &problem{Status: status, Code: e.Code, Message: e.Message}
}

func errorTitle(status int) string {
	switch status {
	case http.StatusNotFound:
		return "Not found"
	case http.StatusForbidden:
		return "Not allowed"
	case http.StatusUnauthorized:
		return "Signed out"
	case http.StatusConflict:
		return "Already changed"
	case http.StatusTooManyRequests:
		return "Slow down"
	case http.StatusBadRequest:
		return "Check the input"
	}
	return "Something went wrong"
}

// notices are the fixed confirmations a redirect may ask a page to show; the
// query names one, it never carries text.
var notices = map[string]string{
	"approved":      "Remediation approved. Execute it when you are ready.",
	"rejected":      "Remediation rejected.",
	"executing":     "Execution started. Steps update below as they run.",
	"resolved":      "Incident resolved.",
	"graded":        "Thank you: your grade counts in the accuracy figures.",
	"context":       "Context added; the next investigation pass will use it.",
	"reinvestigate": "Context added and a new investigation pass started.",
	"investigating": "Investigation started. Agents report below as they finish.",
	"created":       "Incident opened.",
	"revoked":       "API key revoked. Webhooks that use it are refused from now on.",
	"deleted":       "Deleted.",
	"slack-on":      "Slack connected. New incidents will be posted to the channel.",
	"slack-test":    "Test message posted. Look for it in the channel.",
	"source-added":  "Data source added. Agents query it from the next investigation on.",
	"runbook":       "Runbook saved. Investigations that match it will propose it as a remediation.",
	"user":          "User added.",
	"role":          "Role changed. The person is signed out and signs in again with the new role.",
	"removed":       "User removed and signed out everywhere.",
	"welcome":       "Welcome to Causeway. Create an API key to connect your monitoring tools.",
	"signedout":     "You are signed out.",
}

// redirectNotice sends the browser back to a page with a notice after a
// successful action, so a reload does not repeat the action.
func redirectNotice(c *gin.Context, to, notice string) {
	c.Redirect(http.StatusSeeOther, to+"?notice="+notice)
}

func funcs(a *assets) template.FuncMap {
	return template.FuncMap{
		"asset": a.url,
		"ago":   ago,
		"utc":   func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") },
		"iso":   func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
		"pct":   func(f float64) string { return fmt.Sprintf("%.0f%%", math.Round(f*100)) },
		"params": func(m map[string]any) string {
			if len(m) == 0 {
				return "{}"
			}
			b, _ := json.MarshalIndent(m, "", "  ")
			return string(b)
		},
		"describe": func(s *analyzer.Source) string {
			if s == nil {
				return ""
			}
			return s.Describe()
		},
		"duration": humanDuration,
		"short": func(s string, n int) string {
			if len(s) <= n {
				return s
			}
			return s[:n]
		},
		"join":    strings.Join,
		"label":   label,
		"culprit": func(c *analyzer.Culprit) string { return c.String() },
		"has":     slices.Contains[[]string],
		"field":   func(id, label, value string) copyField { return copyField{ID: id, Label: label, Value: value} },
	}
}

// copyField is a read-only value shown once with a copy button.
type copyField struct{ ID, Label, Value string }

// label turns an identifier (db_connection_exhaustion, timed_out) into words,
// keeping the acronyms people write in capitals.
func label(s string) string {
	words := strings.Split(s, "_")
	for i, w := range words {
		if acronyms[w] {
			words[i] = strings.ToUpper(w)
		}
	}
	s = strings.Join(words, " ")
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

var acronyms = map[string]bool{"db": true, "dns": true, "cpu": true, "http": true, "sql": true}

// ago is a coarse age for lists: how long since t, in the largest unit.
func ago(t time.Time) string {
	d := time.Since(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h ago", int(d.Hours()))
	}
	return fmt.Sprintf("%d days ago", int(d.Hours()/24))
}

// humanDuration reads a number of seconds (MTTR) the way people say it.
func humanDuration(seconds int64) string {
	d := time.Duration(seconds) * time.Second
	switch {
	case seconds <= 0:
		return "—"
	case d < time.Minute:
		return fmt.Sprintf("%d s", seconds)
	case d < time.Hour:
		return fmt.Sprintf("%d min %d s", int(d.Minutes()), seconds%60)
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h %d min", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%d days %d h", int(d.Hours()/24), int(d.Hours())%24)
}
