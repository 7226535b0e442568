package service

import (
	"strings"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/errcode"
	"github.com/causeway/causeway/models"
)

// Who may do what. The API's route table and the dashboard both take their
// rules from here, so a button the dashboard shows is one the API honours and a
// request the dashboard refuses is refused by the API too.
var (
	// AnyRole is every signed-in user: reading incidents, investigations,
	// remediations, runbooks, keys, users and analytics.
	AnyRole = []string{models.RoleOwner, models.RoleAdmin, models.RoleOperator, models.RoleViewer}
	// Writers open, investigate and resolve incidents.
	Writers = []string{models.RoleOwner, models.RoleAdmin, models.RoleOperator}
	// Managers run the tenant: approve, reject and execute remediations, and
	// manage users, API keys, runbooks and webhook endpoints.
	Managers = []string{models.RoleOwner, models.RoleAdmin}
	// Owners alone decide how the tenant signs in (single sign-on).
	Owners = []string{models.RoleOwner}
)

// RequireRole is the one role check: nil when p holds one of roles, else the
// forbidden error every client sees.
func RequireRole(p auth.Principal, roles ...string) error {
	if p.HasAnyRole(roles...) {
		return nil
	}
	return errcode.New(errcode.Forbidden, "this operation needs one of the roles: %s", strings.Join(roles, ", "))
}
