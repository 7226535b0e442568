package datasources

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/causeway/causeway/internal/testenv"
)

// refusingPostgres speaks PostgreSQL's wire protocol far enough to refuse
// every login the way a server with password authentication does, with the
// server's own words in the error, and returns its address.
func refusingPostgres(t *testing.T, code, message string) string {
	t.Helper()
	return testenv.Listen(t, func(_ context.Context, conn net.Conn) {
		be := pgproto3.NewBackend(conn, conn)
		if _, err := be.ReceiveStartupMessage(); err != nil {
			return
		}
		be.Send(&pgproto3.ErrorResponse{Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: code, Message: message})
		_ = be.Flush()
	})
}

// TestTestMessagesNeverEchoTheRemote: what the test call says for each way
// a source fails is a fixed sentence; the server's own words (a user name
// in a PostgreSQL FATAL, an HTTP body) never appear in it, nor, for a
// PostgreSQL login failure, in the error a query reports as coverage.
func TestTestMessagesNeverEchoTheRemote(t *testing.T) {
	c := testConnector()
	ctx := context.Background()
	body := "internal-detail: upstream auth at 10.9.8.7 said no for user admin"
	status := http.StatusUnauthorized
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"status":"error","error":"` + body + `"}`))
	}))
	defer api.Close()
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	closedAddr := closed.Addr().String()
	closed.Close()

	base, err := url.Parse(testenv.DatabaseURL(t))
	if err != nil {
		t.Fatal(err)
	}
	pgAt := func(user, host, db string) string {
		return "postgres://" + user + ":pw-123@" + host + "/" + db + "?sslmode=disable"
	}
	cases := []struct {
		name, typ, url, want string
		status               int
		secrets              []string
	}{
		{"PostgreSQL refusing the password", TypePostgres, pgAt("monitor", refusingPostgres(t, "28P01", `password authentication failed for user "monitor"`), "orders"),
			"the server refused the credentials (PostgreSQL 28P01)", 0, []string{"monitor", "password authentication"}},
		{"PostgreSQL without such a role", TypePostgres, pgAt("cw_no_such_role", base.Host, "postgres"),
			"the server does not let this user connect (no such role, or pg_hba.conf refuses it) (PostgreSQL 28000)", 0, []string{"cw_no_such_role"}},
		{"PostgreSQL without such a database", TypePostgres, pgAt(base.User.Username(), base.Host, "cw_no_such_db"),
			"the database does not exist (PostgreSQL 3D000)", 0, []string{"cw_no_such_db"}},
		{"HTTP 401 with a body", TypePrometheus, api.URL, "HTTP 401 from the source: it refused the credential", 401, []string{"internal-detail", "10.9.8.7"}},
		{"HTTP 502 with a body", TypeLoki, api.URL, "HTTP 502 from the source", 502, []string{"internal-detail", "10.9.8.7"}},
		{"nothing listening", TypePrometheus, "http://" + closedAddr, "connection refused", 0, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status = tc.status
			cfg, err := c.Prepare(ctx, Spec{Name: "s", Type: tc.typ, URL: tc.url})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Test(ctx, cfg)
			if err == nil {
				t.Fatal("the test call succeeded")
			}
			got := Describe(err)
			if got != tc.want {
				t.Errorf("message %q, want %q (error %v)", got, tc.want, err)
			}
			for _, s := range tc.secrets {
				if strings.Contains(got, s) {
					t.Errorf("message %q repeats the remote's %q", got, s)
				}
				// A login failure is also a query's coverage reason: the
				// error itself must not carry the server's words either.
				if tc.typ == TypePostgres && strings.Contains(err.Error(), s) {
					t.Errorf("error %q repeats the server's %q", err, s)
				}
			}
		})
	}
}
