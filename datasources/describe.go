package datasources

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"

	"github.com/causeway/causeway/egress"
)

// Describe says in one fixed sentence why a source did not answer, for the
// test call's message. It never repeats what the remote said (an HTTP body,
// a server's error text): those name users, hosts and internals of a system
// the tenant may not be the only one to see through Causeway, and a crafted
// target could use the echo to read what a port answers.
func Describe(err error) string {
	var (
		pe   *pgRefusal
		r    *refusal
		cert *tls.CertificateVerificationError
		ua   x509.UnknownAuthorityError
		hn   x509.HostnameError
		ci   x509.CertificateInvalidError
		rh   tls.RecordHeaderError
		pf   *probeFailures
	)
	switch {
	case errors.As(err, &pf):
		return pf.Error()
	case egress.IsOwnService(err):
		return "blocked: the address is one of Causeway's own services, which no data source may reach"
	case errors.Is(err, ErrBlocked), egress.IsBlocked(err):
		return "blocked: outside this tenant's networks (an operator grants them with `causeway tenant networks`)"
	case errors.As(err, &pe):
		return firstNonEmpty(sqlStates[pe.code], "the server answered with an error") + " (PostgreSQL " + pe.code + ")"
	case errors.As(err, &r):
		return describeStatus(r.status)
	case errors.As(err, &cert), errors.As(err, &ua), errors.As(err, &hn), errors.As(err, &ci):
		return "the server's TLS certificate was not accepted"
	case errors.As(err, &rh):
		return "the server does not speak TLS there"
	case errors.Is(err, egress.ErrResponseTooLarge):
		return "the answer was larger than Causeway reads"
	case errors.Is(err, context.DeadlineExceeded):
		return "timed out"
	}
	switch dialFailure(err) {
	case "refused":
		return "connection refused"
	case "timeout":
		return "timed out"
	case "unreachable":
		return "host unreachable"
	case "unresolved":
		return "the name does not resolve"
	}
	return "no usable answer from the source"
}

// describeStatus is an HTTP refusal by its status alone.
func describeStatus(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return "HTTP 401 from the source: it refused the credential"
	case http.StatusForbidden:
		return "HTTP 403 from the source: the credential may not read this"
	case http.StatusNotFound:
		return "HTTP 404 from the source: is the URL the API's base?"
	}
	return fmt.Sprintf("HTTP %d from the source", status)
}
