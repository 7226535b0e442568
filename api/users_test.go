package api_test

import (
	"net/http"
	"testing"
)

// login signs a person in with the shared test password.
func (s *apiServer) login(t *testing.T, email, password string) tokens {
	t.Helper()
	var tk tokens
	if st, _ := s.do(t, "POST", "/auth/login", "", map[string]string{"email": email, "password": password}, &tk); st != http.StatusOK {
		t.Fatalf("login %s: %d", email, st)
	}
	return tk
}

// TestPeopleCanBeCutOff walks the user routes as an owner and an admin
// would: who may change whom, the answers the contract gives (DESIGN §4),
// and that each change ends the person's sign-in on this process at once.
func TestPeopleCanBeCutOff(t *testing.T) {
	s := startAPI(t, apiConfig(t))
	owner := s.signup(t, "owner@people.example")
	other := s.signup(t, "owner@elsewhere.example")
	const pw = "correct horse battery"
	ids := map[string]string{}
	for _, u := range []struct{ email, role string }{
		{"admin@people.example", "admin"}, {"op@people.example", "operator"}, {"viewer@people.example", "viewer"},
	} {
		var made struct{ UserID string }
		if st, _ := s.do(t, "POST", "/v1/users", owner.AccessToken, map[string]string{"email": u.email, "password": pw, "name": u.role, "role": u.role}, &made); st != http.StatusCreated {
			t.Fatalf("create %s: %d", u.role, st)
		}
		ids[u.role] = made.UserID
	}
	admin, op, viewer := s.login(t, "admin@people.example", pw), s.login(t, "op@people.example", pw), s.login(t, "viewer@people.example", pw)
	alive := func(tk tokens) int {
		st, _ := s.do(t, "GET", "/v1/tenant", tk.AccessToken, nil, nil)
		return st
	}

	var eb errorBody
	for _, c := range []struct {
		what, method, path, token string
		body                      any
		status                    int
		code                      string
	}{
		{"a viewer removes", "DELETE", "/v1/users/" + ids["operator"], viewer.AccessToken, nil, 403, "forbidden"},
		{"an operator removes", "DELETE", "/v1/users/" + ids["viewer"], op.AccessToken, nil, 403, "forbidden"},
		{"an operator changes a role", "PATCH", "/v1/users/" + ids["viewer"], op.AccessToken, map[string]string{"role": "admin"}, 403, "forbidden"},
		{"an operator resets a password", "POST", "/v1/users/" + ids["viewer"] + "/password-reset", op.AccessToken, nil, 403, "forbidden"},
		{"an admin removes the owner", "DELETE", "/v1/users/" + owner.UserID, admin.AccessToken, nil, 403, "forbidden"},
		{"an admin makes an owner", "PATCH", "/v1/users/" + ids["viewer"], admin.AccessToken, map[string]string{"role": "owner"}, 403, "forbidden"},
		{"the last owner leaves", "DELETE", "/v1/users/" + owner.UserID, owner.AccessToken, nil, 409, "last_owner"},
		{"the last owner steps down", "PATCH", "/v1/users/" + owner.UserID, owner.AccessToken, map[string]string{"role": "admin"}, 409, "last_owner"},
		{"another tenant's user", "DELETE", "/v1/users/" + ids["viewer"], other.AccessToken, nil, 404, "not_found"},
		{"an unknown role", "PATCH", "/v1/users/" + ids["viewer"], owner.AccessToken, map[string]string{"role": "root"}, 400, "validation_error"},
	} {
		eb = errorBody{}
		if st, _ := s.do(t, c.method, c.path, c.token, c.body, &eb); st != c.status || eb.Error != c.code {
			t.Errorf("%s: %d %+v, want %d %s", c.what, st, eb, c.status, c.code)
		}
	}

	// An admin demotes the operator: {userId, role}, and the old session ends.
	var changed struct{ UserID, Role string }
	if st, _ := s.do(t, "PATCH", "/v1/users/"+ids["operator"], admin.AccessToken, map[string]string{"role": "viewer"}, &changed); st != http.StatusOK || changed.UserID != ids["operator"] || changed.Role != "viewer" {
		t.Fatalf("demote: %d %+v", st, changed)
	}
	if st := alive(op); st != http.StatusUnauthorized {
		t.Errorf("the demoted operator's token: %d, want 401", st)
	}
	if st, _ := s.do(t, "POST", "/auth/refresh", "", map[string]string{"refreshToken": op.RefreshToken}, nil); st != http.StatusUnauthorized {
		t.Errorf("the demoted operator refreshes: %d", st)
	}

	// An admin removes the viewer: {userId, status: removed}.
	var removed struct{ UserID, Status string }
	if st, _ := s.do(t, "DELETE", "/v1/users/"+ids["viewer"], admin.AccessToken, nil, &removed); st != http.StatusOK || removed.UserID != ids["viewer"] || removed.Status != "removed" {
		t.Fatalf("remove: %d %+v", st, removed)
	}
	if st := alive(viewer); st != http.StatusUnauthorized {
		t.Errorf("the removed viewer's token: %d, want 401", st)
	}
	if st, _ := s.do(t, "POST", "/auth/login", "", map[string]string{"email": "viewer@people.example", "password": pw}, &eb); st != http.StatusUnauthorized || eb.Error != "invalid_credentials" {
		t.Errorf("the removed viewer signs in: %d %+v", st, eb)
	}

	// A forced reset: the token is shown once and signs the person in.
	var reset struct{ UserID, ResetToken string }
	if st, _ := s.do(t, "POST", "/v1/users/"+ids["operator"]+"/password-reset", admin.AccessToken, nil, &reset); st != http.StatusOK || reset.ResetToken == "" {
		t.Fatalf("reset: %d %+v", st, reset)
	}
	var again tokens
	if st, _ := s.do(t, "POST", "/auth/reset-password", "", map[string]string{"token": reset.ResetToken, "password": "chosen after the reset"}, &again); st != http.StatusOK {
		t.Fatalf("spend the reset token: %d", st)
	}

	// Changing one's own password ends the other sessions and hands a new pair.
	second := s.login(t, "op@people.example", "chosen after the reset")
	var fresh tokens
	if st, _ := s.do(t, "POST", "/v1/users/me/password", again.AccessToken, map[string]string{"currentPassword": "wrong password!!", "newPassword": "a third good password"}, &eb); st != http.StatusBadRequest {
		t.Errorf("a wrong current password: %d %+v", st, eb)
	}
	if st, _ := s.do(t, "POST", "/v1/users/me/password", again.AccessToken, map[string]string{"currentPassword": "chosen after the reset", "newPassword": "a third good password"}, &fresh); st != http.StatusOK || fresh.AccessToken == "" {
		t.Fatalf("change password: %d", st)
	}
	if st := alive(second); st != http.StatusUnauthorized {
		t.Errorf("another session outlived the password change: %d", st)
	}
	if st := alive(fresh); st != http.StatusOK {
		t.Errorf("the new pair: %d", st)
	}

	// Sign-out: 204, the session's tokens stop, and an unknown token is 204 too.
	if st, _ := s.do(t, "POST", "/auth/logout", "", map[string]string{"refreshToken": fresh.RefreshToken}, nil); st != http.StatusNoContent {
		t.Fatalf("logout: %d", st)
	}
	if st := alive(fresh); st != http.StatusUnauthorized {
		t.Errorf("the signed-out access token: %d, want 401", st)
	}
	if st, _ := s.do(t, "POST", "/auth/logout", "", map[string]string{"refreshToken": "not-a-token"}, nil); st != http.StatusNoContent {
		t.Errorf("logout of an unknown token: %d", st)
	}
	if st := alive(owner); st != http.StatusOK {
		t.Errorf("the owner's own session: %d", st)
	}
}

// TestHTTPSBehindAProxy: with an https public address, TLS ends at a proxy
// and requests arrive in plain HTTP; browsers are still told to keep to
// HTTPS, and the sign-in cookies are Secure. On plain HTTP neither is sent,
// or a laptop's http://127.0.0.1 would lose its cookies.
func TestHTTPSBehindAProxy(t *testing.T) {
	for _, public := range []string{"https://causeway.example", ""} {
		cfg := githubConfig(t, "https://github.example")
		cfg.PublicURL = public
		s := startAPI(t, cfg)
		_, h := s.do(t, "GET", "/health", "", nil, nil)
		hsts := h.Get("Strict-Transport-Security")
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := client.Get(s.URL + "/auth/github/login")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		var secure, set bool
		for _, ck := range resp.Cookies() {
			set, secure = true, ck.Secure
		}
		if !set {
			t.Fatalf("%q: the OAuth sign-in set no cookie (%d)", public, resp.StatusCode)
		}
		if https := public != ""; (hsts != "") != https || secure != https {
			t.Errorf("public URL %q: HSTS %q, Secure cookie %v", public, hsts, secure)
		}
	}
}
