package auth

import (
	"errors"
	"testing"

	"github.com/causeway/causeway/errcode"
)

// TestPageCursorsAreBoundToTheirQuery: a cursor from one tenant's list, or
// from the same list with other filters, or altered, is refused; the right
// one resumes after the last row of its page.
func TestPageCursorsAreBoundToTheirQuery(t *testing.T) {
	s := NewSigner("pages-test-master-secret", "cursor")
	rows := []string{"a", "b", "c"}
	page, next, err := CutPage(s, "ten_1", "open|", 2, rows, func(r string) string { return r })
	if err != nil || len(page) != 2 || next == "" {
		t.Fatalf("page %v, cursor %q, %v; want two rows and a cursor", page, next, err)
	}
	if limit, after, err := s.OpenPage("ten_1", "open|", "", next); err != nil || after != "b" || limit != DefaultPageSize {
		t.Errorf("resume: limit %d after %q, %v; want %d after b", limit, after, err, DefaultPageSize)
	}
	for name, c := range map[string]struct{ tenant, query, cursor string }{
		"another tenant": {"ten_2", "open|", next},
		"other filters":  {"ten_1", "resolved|", next},
		"altered":        {"ten_1", "open|", next[:len(next)-2] + "xx"},
	} {
		_, _, err := s.OpenPage(c.tenant, c.query, "", c.cursor)
		var e *errcode.Error
		if !errors.As(err, &e) || e.Code != errcode.Validation {
			t.Errorf("%s: %v, want a validation error", name, err)
		}
	}
	if _, next, _ := CutPage(s, "ten_1", "open|", 3, rows, func(r string) string { return r }); next != "" {
		t.Errorf("the last page has a cursor %q", next)
	}
	for _, limit := range []string{"0", "101", "ten"} {
		if _, _, err := s.OpenPage("ten_1", "open|", limit, ""); err == nil {
			t.Errorf("limit %q accepted", limit)
		}
	}
}
