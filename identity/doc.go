// Package identity is one slice: who a caller is and what they may do.
//
// Accounts (accounts.go) serves sign-up, password login, refresh-token
// rotation with reuse detection, sign-out, password reset and users;
// apikeys.go issues the hashed keys webhooks and scripts use; oauth.go
// signs in with GitHub and Google; sso*.go is enterprise single sign-on
// (OIDC and SAML) with its enforcement; plans.go sets a tenant's quotas
// from its plan; RequireRole (roles.go) is the one role check every route
// uses. API keys and SSO connections are its own rows (store_*.go); tenants,
// users and refresh tokens stay in the kernel, which every slice reads.
package identity
