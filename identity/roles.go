package identity

import (
	"strings"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/errcode"
)

// RequireRole is the one role check: nil when p holds one of roles, else the
// forbidden error every client sees.
func RequireRole(p auth.Principal, roles ...string) error {
	if p.HasAnyRole(roles...) {
		return nil
	}
	return errcode.New(errcode.Forbidden, "this operation needs one of the roles: %s", strings.Join(roles, ", "))
}
