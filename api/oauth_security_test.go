package api_test

import (
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/config"
)

// oauthBrowser drives the GitHub flow against s like a browser: it keeps
// cookies and does not follow redirects.
type oauthBrowser struct {
	t *testing.T
	s *apiServer
	c *http.Client
}

func newOAuthBrowser(t *testing.T, s *apiServer) *oauthBrowser {
	jar, _ := cookiejar.New(nil)
	return &oauthBrowser{t: t, s: s, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// complete sends the browser from an authorization URL back to the callback,
// as the identity provider does after the person agrees.
func (b *oauthBrowser) complete(authURL string) (int, tokens, errorBody) {
	loc, err := url.Parse(authURL)
	if err != nil {
		b.t.Fatal(err)
	}
	resp, err := b.c.Get(b.s.URL + "/auth/github/callback?" + url.Values{"code": {"good-code"}, "state": {loc.Query().Get("state")}}.Encode())
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	var tk tokens
	var eb errorBody
	raw := json.NewDecoder(resp.Body)
	var m map[string]any
	_ = raw.Decode(&m)
	bs, _ := json.Marshal(m)
	_ = json.Unmarshal(bs, &tk)
	_ = json.Unmarshal(bs, &eb)
	return resp.StatusCode, tk, eb
}

// login starts a sign-in and completes it.
func (b *oauthBrowser) login() (int, tokens, errorBody) {
	resp, err := b.c.Get(b.s.URL + "/auth/github/login")
	if err != nil {
		b.t.Fatal(err)
	}
	resp.Body.Close()
	return b.complete(resp.Header.Get("Location"))
}

// link starts linking GitHub to the account of token and completes it.
func (b *oauthBrowser) link(token string) (int, tokens, errorBody) {
	req, _ := http.NewRequest("POST", b.s.URL+"/v1/oauth/github/link", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	var out struct {
		Provider         string `json:"provider"`
		AuthorizationURL string `json:"authorizationUrl"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&out)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || out.Provider != "github" || !strings.Contains(out.AuthorizationURL, "client_id=gh-client") {
		b.t.Fatalf("start link: %d %+v", resp.StatusCode, out)
	}
	return b.complete(out.AuthorizationURL)
}

func githubConfig(t *testing.T, idpURL string) *config.Config {
	cfg := apiConfig(t)
	cfg.OAuth.GitHub = config.OAuthProvider{
		ClientID: "gh-client", ClientSecret: "gh-secret",
		AuthURL: idpURL + "/login/oauth/authorize", TokenURL: idpURL + "/login/oauth/access_token",
		UserInfoURL: idpURL + "/user", EmailsURL: idpURL + "/user/emails",
	}
	return cfg
}

// TestOAuthDoesNotTakeOverPasswordAccounts shows an external identity is not
// linked to an account just because the e-mail matches: sign-up never proves
// an address, so whoever holds a provider account with that address would
// walk into the victim's tenant. The owner links it explicitly, while signed
// in; after that the identity signs in to that account.
func TestOAuthDoesNotTakeOverPasswordAccounts(t *testing.T) {
	idp := fakeGitHub(t, "victim@example.com")
	s := startAPI(t, githubConfig(t, idp.URL))
	victim := s.signup(t, "victim@example.com")

	st, tk, body := newOAuthBrowser(t, s).login()
	if st != http.StatusConflict || body.Error != "email_taken" || tk.AccessToken != "" || !strings.Contains(body.Message, "link") {
		t.Fatalf("sign-in with a provider account using the victim's e-mail: %d %+v", st, body)
	}
	var linked int64
	s.app.Store.DB().Table("users").Where("id = ? AND oauth_provider <> ''", victim.UserID).Count(&linked)
	if linked != 0 {
		t.Fatal("the identity was linked to the victim's account")
	}

	// The owner links GitHub from their own session.
	b := newOAuthBrowser(t, s)
	st, tk, body = b.link(victim.AccessToken)
	if st != http.StatusOK || tk.AccessToken == "" {
		t.Fatalf("explicit link: %d %+v", st, body)
	}
	verify := auth.NewTokens(s.cfg.AuthJWTSecret, s.cfg.AuthIssuer, s.cfg.AuthAudience, time.Hour, func(string) bool { return true })
	st, tk, _ = newOAuthBrowser(t, s).login()
	p, err := verify.Verify(tk.AccessToken)
	if st != http.StatusOK || err != nil || p.UserID != victim.UserID {
		t.Fatalf("sign-in after linking: %d %+v %v", st, p, err)
	}

	// A link that changes no row is refused: an account already linked to an
	// identity cannot silently take another.
	other := s.signup(t, "other@example.com")
	s.app.Store.DB().Exec("UPDATE users SET oauth_provider = 'google', oauth_subject = 'g-1' WHERE id = ?", other.UserID)
	if st, _, body := newOAuthBrowser(t, s).link(other.AccessToken); st != http.StatusConflict {
		t.Fatalf("link onto an already linked account: %d %+v", st, body)
	}
	// And the identity stays where it is: linking it to a second account is refused.
	third := s.signup(t, "third@example.com")
	if st, _, body := newOAuthBrowser(t, s).link(third.AccessToken); st != http.StatusConflict {
		t.Fatalf("link of an identity another account holds: %d %+v", st, body)
	}
}
