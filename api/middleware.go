package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/netip"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/errcode"
	"github.com/causeway/causeway/identity"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/ratelimit"
)

// MaxBodyBytes is the largest request body accepted (413 above it).
const MaxBodyBytes = 1 << 20

const (
	ctxPrincipal = "causeway.principal"
	ctxRequestID = "causeway.request_id"
)

var validRequestID = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

// requestIDs takes a sane X-Request-ID from the caller (so traces join up across
// proxies) or makes one, and echoes it in the response.
func requestIDs() gin.HandlerFunc {
	return func(c *gin.Context) {
		id := c.GetHeader("X-Request-ID")
		if !validRequestID.MatchString(id) {
			id = models.NewID("req")
		}
		c.Set(ctxRequestID, id)
		c.Header("X-Request-ID", id)
		c.Next()
	}
}

func requestID(c *gin.Context) string { return c.GetString(ctxRequestID) }

// accessLog writes one JSON line per request. It logs the route template, never the
// query string, because webhook callers may put their API key there.
func accessLog(log *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		route := routeOf(c)
		attrs := []any{
			slog.String("method", c.Request.Method), slog.String("route", route),
			slog.Int("status", c.Writer.Status()), slog.Float64("latency_ms", float64(time.Since(start).Microseconds())/1000),
			slog.String("request_id", requestID(c)), slog.String("client_ip", c.ClientIP()),
		}
		if p, ok := principal(c); ok {
			attrs = append(attrs, slog.String("tenant_id", p.TenantID), slog.String("user_id", p.UserID))
		}
		log.Info("http request", attrs...)
	}
}

// hsts tells browsers that reached the API over HTTPS never to use plain
// HTTP for it again. A year, as browsers' preload lists expect; subdomains
// are left to the operator, who may serve other things on them.
func hsts(d Deps) gin.HandlerFunc {
	return func(c *gin.Context) {
		if d.https(c) {
			c.Header("Strict-Transport-Security", "max-age=31536000")
		}
		c.Next()
	}
}

// recovery turns a panic into a logged 500 with the standard body.
func recovery(log *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		defer func() {
			if r := recover(); r != nil {
				if r == http.ErrAbortHandler {
					panic(r)
				}
				log.Error("panic serving request", slog.String("request_id", requestID(c)),
					slog.Any("panic", r), slog.String("stack", string(debug.Stack())))
				if !c.Writer.Written() {
					failCode(c, errcode.Internal, "an unexpected error occurred; quote request id %s", requestID(c))
				}
				c.Abort()
			}
		}()
		c.Next()
	}
}

// bodyLimit refuses bodies over MaxBodyBytes: at once when Content-Length says so,
// otherwise when reading crosses the limit (see readBody).
func bodyLimit() gin.HandlerFunc {
	return func(c *gin.Context) {
		if c.Request.ContentLength > MaxBodyBytes {
			failCode(c, errcode.PayloadTooLarge, "request body must be at most %d bytes", MaxBodyBytes)
			return
		}
		c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, MaxBodyBytes)
		c.Next()
	}
}

// readBody reads the whole (size-limited) body.
func readBody(c *gin.Context) ([]byte, error) {
	b, err := io.ReadAll(c.Request.Body)
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, errcode.New(errcode.PayloadTooLarge, "request body must be at most %d bytes", MaxBodyBytes)
	}
	if err != nil {
		return nil, errcode.New(errcode.Validation, "could not read request body")
	}
	return b, nil
}

// bindJSON decodes the body into v. An empty body leaves v as it is, for endpoints
// whose fields are all optional.
func bindJSON(c *gin.Context, v any) error {
	b, err := readBody(c)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	if err := json.Unmarshal(b, v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return errcode.New(errcode.Validation, "field %s must be of type %s", typeErr.Field, typeErr.Type)
		}
		return errcode.New(errcode.Validation, "body must be a valid JSON object")
	}
	return nil
}

// authenticate verifies the Bearer access token. Every failure is the same 401:
// the caller learns nothing about which check failed.
func authenticate(accounts *identity.Accounts) gin.HandlerFunc {
	return func(c *gin.Context) {
		h := c.GetHeader("Authorization")
		raw, ok := strings.CutPrefix(h, "Bearer ")
		if !ok || raw == "" {
			failCode(c, errcode.Unauthorized, "a valid Bearer access token is required")
			return
		}
		p, err := accounts.Authenticate(c.Request.Context(), strings.TrimSpace(raw))
		if err != nil {
			fail(c, err)
			return
		}
		setCaller(c, p)
		c.Next()
	}
}

// principal is the verified caller. The tenant of every request comes from here.
func principal(c *gin.Context) (auth.Principal, bool) {
	v, ok := c.Get(ctxPrincipal)
	if !ok {
		return auth.Principal{}, false
	}
	p, ok := v.(auth.Principal)
	return p, ok
}

// caller is principal for handlers behind authenticate.
func caller(c *gin.Context) auth.Principal {
	p, _ := principal(c)
	return p
}

// requireRole lets the request through only for the given roles.
func requireRole(roles ...string) gin.HandlerFunc {
	return func(c *gin.Context) {
		if err := identity.RequireRole(caller(c), roles...); err != nil {
			fail(c, err)
			return
		}
		c.Next()
	}
}

// rateLimit applies the per-minute limit to key(c). If the limiter's backend fails
// the request goes through (fail open) with a log line; the health report shows
// the backend as unhealthy and the service as degraded meanwhile.
func rateLimit(l ratelimit.Limiter, perMinute int, log *slog.Logger, key func(*gin.Context) string) gin.HandlerFunc {
	return func(c *gin.Context) {
		res, err := l.Allow(c.Request.Context(), key(c), perMinute)
		if err != nil {
			log.Warn("rate limiter unavailable; letting request through", slog.String("backend", l.Backend()), slog.Any("error", err))
			c.Next()
			return
		}
		if res.Limit > 0 {
			c.Header("X-RateLimit-Limit", strconv.Itoa(res.Limit))
			c.Header("X-RateLimit-Remaining", strconv.Itoa(res.Remaining))
			c.Header("X-RateLimit-Reset", strconv.Itoa(ceilSeconds(res.ResetAfter)))
		}
		if !res.Allowed {
			retry := strconv.Itoa(max(ceilSeconds(res.RetryAfter), 1))
			c.Header("X-RateLimit-Reset", retry)
			c.Header("Retry-After", retry)
			failCode(c, errcode.RateLimited, "rate limit of %d requests per minute exceeded; retry in %s s", res.Limit, retry)
			return
		}
		c.Next()
	}
}

// clientKey names the client for per-client limits: its IPv4 address, or the
// /64 its IPv6 address belongs to, because one host is usually given a whole
// /64 and could otherwise rotate through addresses for fresh budgets.
func clientKey(c *gin.Context) string {
	ip, err := netip.ParseAddr(c.ClientIP())
	if err != nil {
		return c.ClientIP()
	}
	ip = ip.Unmap()
	if ip.Is4() {
		return ip.String()
	}
	p, _ := ip.Prefix(64)
	return p.String()
}

func ceilSeconds(d time.Duration) int { return int(math.Ceil(d.Seconds())) }
