package auth

import (
	"errors"
	"strconv"
	"time"

	"github.com/causeway/causeway/errcode"
)

// Page sizes of the list endpoints: the default and the largest a client may ask for.
const (
	DefaultPageSize = 20
	MaxPageSize     = 100
	cursorTTL       = time.Hour
)

// pageCursor is the signed content of an opaque cursor. It binds the page
// position to the tenant and the query, so it cannot be replayed against
// another tenant's list or other filters.
type pageCursor struct {
	After  string `json:"a"`
	Tenant string `json:"t"`
	Query  string `json:"q"`
}

// OpenPage reads a list request's raw limit and cursor: the page size and the
// id the page starts after ("" for the first page). query names the list and
// its filters. Every refusal is a validation error for the client.
func (s *Signer) OpenPage(tenantID, query, limit, cursor string) (int, string, error) {
	n := DefaultPageSize
	if limit != "" {
		v, err := strconv.Atoi(limit)
		if err != nil || v < 1 || v > MaxPageSize {
			return 0, "", errcode.Invalid("limit must be an integer from 1 to %d", MaxPageSize)
		}
		n = v
	}
	if cursor == "" {
		return n, "", nil
	}
	var c pageCursor
	if err := s.Open(cursor, &c); err != nil {
		if errors.Is(err, ErrTokenExpired) {
			return 0, "", errcode.Invalid("cursor has expired; start again from the first page")
		}
		return 0, "", errcode.Invalid("cursor is invalid")
	}
	if c.Tenant != tenantID || c.Query != query {
		return 0, "", errcode.Invalid("cursor belongs to a different query; pass the same filters as the first page")
	}
	return n, c.After, nil
}

// CutPage turns a list read of limit+1 rows (the one past the page tells
// that another page follows) into the page's rows and the cursor of the next
// page, "" on the last one. id names a row as the cursor's position.
func CutPage[T any](s *Signer, tenantID, query string, limit int, rows []T, id func(T) string) ([]T, string, error) {
	if len(rows) <= limit {
		return rows, "", nil
	}
	rows = rows[:limit]
	next, err := s.Seal(pageCursor{After: id(rows[limit-1]), Tenant: tenantID, Query: query}, cursorTTL)
	return rows, next, err
}
