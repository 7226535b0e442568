package api

import (
	"github.com/gin-gonic/gin"

	"github.com/causeway/causeway/auth"
)

// Dashboard is the browser UI (package ui) that this process serves beside the
// JSON API. It registers its own pages on the engine, behind the same request
// ids, access log, metrics, recovery and body limit as every API route.
type Dashboard interface {
	Register(r *gin.Engine, hooks DashboardHooks)
}

// DashboardHooks are the API's own middleware, handed to the dashboard so its
// pages are limited and logged by the same code as the API routes rather than
// by a copy of it.
type DashboardHooks struct {
	// SignInLimit is the per-client-IP limit of sign-up, login and refresh.
	SignInLimit gin.HandlerFunc
	// TenantLimit is the per-tenant request limit; it needs SetCaller first.
	TenantLimit gin.HandlerFunc
	// SetCaller records who a verified session speaks for, exactly as a verified
	// Bearer token does, for the tenant limit and the access log.
	SetCaller func(c *gin.Context, p auth.Principal)
}

func setCaller(c *gin.Context, p auth.Principal) { c.Set(ctxPrincipal, p) }
