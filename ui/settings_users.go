package ui

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/identity"
	"github.com/causeway/causeway/models"
)

// usersView is the users and roles section: who belongs to the tenant, what
// each role may do, and the form that adds a user.
type usersView struct {
	Users []models.User
	Roles []roleRow
	Form  identity.CreateUserInput
}

// roleRow is one line of the roles table, drawn from the service's role sets so
// the table can never disagree with what the API enforces.
type roleRow struct {
	Role                string
	Read, Write, Manage bool
	CreateOwners        bool
}

func userRoutes(d *Dashboard, g *gin.RouterGroup) {
	g.GET("", d.users)
	g.POST("", d.allow(models.Managers...), d.createUser)
	g.POST("/:id/role", d.allow(models.Managers...), d.setUserRole)
	g.POST("/:id/remove", d.allow(models.Managers...), d.removeUser)
}

func (d *Dashboard) users(c *gin.Context) {
	d.showUsers(c, http.StatusOK, identity.CreateUserInput{Role: models.RoleViewer}, nil)
}

func (d *Dashboard) showUsers(c *gin.Context, status int, form identity.CreateUserInput, prob *problem) {
	users, err := d.o.Accounts.ListUsers(c.Request.Context(), principal(c))
	if err != nil {
		d.fail(c, err)
		return
	}
	form.Password = ""
	d.settingsPage(c, status, "users", "Users and roles", usersView{Users: users, Roles: roleTable(), Form: form}, prob)
}

func roleTable() []roleRow {
	var out []roleRow
	for _, r := range models.AnyRole {
		p := auth.Principal{Roles: []string{r}}
		out = append(out, roleRow{Role: r, Read: true,
			Write:        identity.RequireRole(p, models.Writers...) == nil,
			Manage:       identity.RequireRole(p, models.Managers...) == nil,
			CreateOwners: r == models.RoleOwner})
	}
	return out
}

func (d *Dashboard) createUser(c *gin.Context) {
	in := identity.CreateUserInput{Email: c.PostForm("email"), Password: c.PostForm("password"), Name: c.PostForm("name"), Role: c.PostForm("role")}
	if _, err := d.o.Accounts.CreateUser(c.Request.Context(), principal(c), in); err != nil {
		prob := problemOf(c, err)
		d.showUsers(c, prob.Status, in, prob)
		return
	}
	redirectNotice(c, Prefix+"/settings/users", "user")
}

// setUserRole changes a person's role; their sessions end, so they sign in
// again with it.
func (d *Dashboard) setUserRole(c *gin.Context) {
	if _, err := d.o.Accounts.SetRole(c.Request.Context(), principal(c), c.Param("id"), identity.SetRoleInput{Role: c.PostForm("role")}); err != nil {
		prob := problemOf(c, err)
		d.showUsers(c, prob.Status, identity.CreateUserInput{Role: models.RoleViewer}, prob)
		return
	}
	redirectNotice(c, Prefix+"/settings/users", "role")
}

// removeUser removes a person and ends their sessions.
func (d *Dashboard) removeUser(c *gin.Context) {
	if err := d.o.Accounts.RemoveUser(c.Request.Context(), principal(c), c.Param("id")); err != nil {
		prob := problemOf(c, err)
		d.showUsers(c, prob.Status, identity.CreateUserInput{Role: models.RoleViewer}, prob)
		return
	}
	redirectNotice(c, Prefix+"/settings/users", "removed")
}
