// Package models is the shared kernel: the rows every slice reads (tenants,
// users and roles, incidents and their timeline, investigations and agent
// runs, the outbox) and the transactions that keep them consistent (quota
// spending, status changes, grouping in the ingest transaction), plus
// opening and migrating the database. A slice keeps its own rows in its own
// store and registers them (RegisterRows). The same code runs on PostgreSQL
// (production, CI) and on SQLite (make run).
package models

import (
	"slices"
	"time"
)

// Roles a user can hold, strongest first.
const (
	RoleOwner    = "owner"
	RoleAdmin    = "admin"
	RoleOperator = "operator"
	RoleViewer   = "viewer"
)

// Who may do what. The API's route table and the dashboard both take their
// rules from here, so a button the dashboard shows is one the API honours and a
// request the dashboard refuses is refused by the API too.
var (
	// AnyRole is every signed-in user: reading incidents, investigations,
	// remediations, runbooks, keys, users and analytics.
	AnyRole = []string{RoleOwner, RoleAdmin, RoleOperator, RoleViewer}
	// Writers open, investigate and resolve incidents.
	Writers = []string{RoleOwner, RoleAdmin, RoleOperator}
	// Managers run the tenant: approve, reject and execute remediations, and
	// manage users, API keys, runbooks and webhook endpoints.
	Managers = []string{RoleOwner, RoleAdmin}
	// Owners alone decide how the tenant signs in (single sign-on).
	Owners = []string{RoleOwner}
)

// ValidRole reports whether r is one of the four roles.
func ValidRole(r string) bool {
	switch r {
	case RoleOwner, RoleAdmin, RoleOperator, RoleViewer:
		return true
	}
	return false
}

// Incident statuses, in the order an incident usually passes through them
// (docs/data-flow.md).
const (
	StatusOpen          = "open"
	StatusTriaging      = "triaging"
	StatusInvestigating = "investigating"
	StatusInvestigated  = "investigated"
	StatusRemediating   = "remediating"
	StatusResolved      = "resolved"
)

// ValidStatus reports whether s is an incident status.
func ValidStatus(s string) bool {
	switch s {
	case StatusOpen, StatusTriaging, StatusInvestigating, StatusInvestigated, StatusRemediating, StatusResolved:
		return true
	}
	return false
}

// ValidSeverity reports whether s is a severity (including info).
func ValidSeverity(s string) bool {
	switch s {
	case SeverityCritical, SeverityHigh, SeverityMedium, SeverityLow, SeverityInfo:
		return true
	}
	return false
}

// Severities. Webhook input also allows info.
const (
	SeverityCritical = "critical"
	SeverityHigh     = "high"
	SeverityMedium   = "medium"
	SeverityLow      = "low"
	SeverityInfo     = "info"
)

// SeveritiesBySeriousness lists the severities, most severe first: the one
// order that admission, task priority and the Slack notify filter rank by.
var SeveritiesBySeriousness = []string{SeverityCritical, SeverityHigh, SeverityMedium, SeverityLow, SeverityInfo}

// SeverityRank is s's place in SeveritiesBySeriousness (0 is critical); a
// value that is not a severity ranks with info, the least.
func SeverityRank(s string) int {
	if i := slices.Index(SeveritiesBySeriousness, s); i >= 0 {
		return i
	}
	return len(SeveritiesBySeriousness) - 1
}

// SourceManual marks incidents opened through the API.
const SourceManual = "manual"

// Tenant is one customer organisation; every other row hangs off a tenant.
type Tenant struct {
	ID   string `gorm:"primaryKey;size:40"`
	Name string `gorm:"size:200;not null"`
	// Plan names the tenant's plan; the quotas below are that plan's,
	// copied here so every quota check reads them in the statement that
	// spends them.
	Plan                string `gorm:"size:16;not null;default:free"`
	QuotaEvents         int    `gorm:"not null"` // per calendar month, 0 = unlimited
	QuotaInvestigations int    `gorm:"not null"` // per calendar month, 0 = unlimited
	// DataSourceNetworks are the private networks (CIDRs, comma-separated)
	// the operator granted the tenant's data sources (`causeway tenant
	// networks`); what they reach is this inside
	// CAUSEWAY_DATASOURCE_ALLOWED_NETWORKS. Empty grants none: a tenant
	// reaches public addresses only until an operator says otherwise.
	DataSourceNetworks string `gorm:"size:2000;not null;default:''"`
	CreatedAt          time.Time
}

// User is a person who signs in to a tenant with one role.
type User struct {
	ID            string `gorm:"primaryKey;size:40"`
	TenantID      string `gorm:"size:40;not null;index"`
	Email         string `gorm:"size:320;not null;uniqueIndex"`
	Name          string `gorm:"size:200;not null"`
	Role          string `gorm:"size:16;not null"`
	PasswordHash  string `gorm:"size:200"`
	OAuthProvider string `gorm:"column:oauth_provider;size:20;uniqueIndex:idx_users_oauth,where:oauth_provider <> ''"`
	OAuthSubject  string `gorm:"column:oauth_subject;size:200;uniqueIndex:idx_users_oauth,where:oauth_provider <> ''"`
	// EmailVerifiedAt is when an identity provider vouched that this person
	// controls Email (a provider's verified address, on an account created
	// through it or linked by the signed-in user); nil for a password
	// sign-up, which proves nothing about the address.
	EmailVerifiedAt *time.Time
	CreatedAt       time.Time
}

// RefreshToken is one link of a rotation chain (Family). Only the SHA-256 of the token
// is stored; presenting a rotated token again revokes the whole family.
type RefreshToken struct {
	ID        string `gorm:"primaryKey;size:40"`
	TenantID  string `gorm:"size:40;not null"`
	UserID    string `gorm:"size:40;not null;index"`
	FamilyID  string `gorm:"size:40;not null;index"`
	TokenHash string `gorm:"size:64;not null;uniqueIndex"`
	ExpiresAt time.Time
	RotatedAt *time.Time
	RevokedAt *time.Time
	CreatedAt time.Time
	// Method is how the session began (SignInPassword, SignInOAuth,
	// SignInSSO), copied to every link, so a refresh can re-check whether the
	// tenant still allows it.
	Method string `gorm:"size:16;not null;default:''"`
	// StartedAt is when the session began, copied to every link: no link
	// outlives StartedAt plus the absolute session lifetime. Zero on links
	// written before it was recorded, which then count from their own
	// CreatedAt.
	StartedAt time.Time
}

// How a session began (RefreshToken.Method).
const (
	SignInPassword = "password"
	SignInOAuth    = "oauth"
	SignInSSO      = "sso"
)

// PasswordResetToken is a one-time way into an account: `causeway tenant
// create` issues one for a new owner, who exchanges it for a password. Only
// the SHA-256 of the token is stored.
type PasswordResetToken struct {
	ID        string    `gorm:"primaryKey;size:40"`
	TenantID  string    `gorm:"size:40;not null"`
	UserID    string    `gorm:"size:40;not null;index"`
	TokenHash string    `gorm:"size:64;not null;uniqueIndex"`
	ExpiresAt time.Time `gorm:"not null"`
	UsedAt    *time.Time
	CreatedAt time.Time `gorm:"not null"`
}

// Incident is the record the API lists and reads. WorkflowStartedAt stays nil until
// its IncidentWorkflow is known to exist; the dispatcher starts any it finds nil, so
// an incident can never be left without its workflow.
type Incident struct {
	ID                string            `gorm:"primaryKey;size:40;index:idx_incidents_tenant_page,priority:2;index:idx_incidents_tenant_status,priority:3;index:idx_incidents_tenant_severity,priority:3"`
	TenantID          string            `gorm:"size:40;not null;index:idx_incidents_tenant_page,priority:1;index:idx_incidents_tenant_status,priority:1;index:idx_incidents_tenant_severity,priority:1;index:idx_incidents_tenant_created,priority:1;index:idx_incidents_tenant_analytics,priority:1;uniqueIndex:idx_incidents_dedup,priority:1,where:source_alert_id <> ''"`
	Title             string            `gorm:"size:500;not null"`
	Description       string            `gorm:"type:text;not null"`
	Severity          string            `gorm:"size:16;not null;index:idx_incidents_tenant_severity,priority:2;index:idx_incidents_tenant_analytics,priority:3"`
	Status            string            `gorm:"size:16;not null;index:idx_incidents_tenant_status,priority:2"`
	Source            string            `gorm:"size:40;not null;uniqueIndex:idx_incidents_dedup,priority:2,where:source_alert_id <> ''"`
	SourceAlertID     string            `gorm:"size:500;not null;default:'';uniqueIndex:idx_incidents_dedup,priority:3,where:source_alert_id <> ''"`
	Service           string            `gorm:"size:200;not null;default:''"`
	Environment       string            `gorm:"size:100;not null;default:''"`
	Tags              map[string]string `gorm:"type:text;serializer:json"`
	Metadata          map[string]any    `gorm:"type:text;serializer:json"`
	CreatedAt         time.Time         `gorm:"not null;index:idx_incidents_tenant_created,priority:2;index:idx_incidents_tenant_analytics,priority:2"`
	UpdatedAt         time.Time         `gorm:"not null"`
	ResolvedAt        *time.Time        `gorm:"index:idx_incidents_tenant_analytics,priority:4"`
	WorkflowStartedAt *time.Time        `gorm:"index:idx_incidents_unstarted,where:workflow_started_at IS NULL"`
	// AdmittedAt is when the dispatcher let the incident's investigation
	// start. An alert's incident waits, triaging with AdmittedAt nil, while
	// the bounded number of investigations in flight is reached; the index
	// covers only incidents being triaged or investigated, the ones admission
	// counts and orders.
	AdmittedAt *time.Time `gorm:"index:idx_incidents_admission,where:status IN ('triaging'\\,'investigating')"`
	// AlertCount is how many alerts the incident stands for: the one that
	// opened it plus those grouped into it (models.GroupAlert).
	AlertCount int `gorm:"not null;default:1"`
}

// TimelineEntry is one line of an incident's history. DedupKey makes writes from
// retried activities idempotent: the same step never appears twice.
type TimelineEntry struct {
	ID         uint64    `gorm:"primaryKey;autoIncrement"`
	TenantID   string    `gorm:"size:40;not null"`
	IncidentID string    `gorm:"size:40;not null;index:idx_timeline_incident,priority:1"`
	At         time.Time `gorm:"not null;index:idx_timeline_incident,priority:2"`
	Kind       string    `gorm:"size:40;not null"`
	Message    string    `gorm:"type:text;not null"`
	Actor      string    `gorm:"size:320;not null"`
	DedupKey   string    `gorm:"size:300;not null;uniqueIndex"`
}

// TableName keeps the table name readable in SQL consoles.
func (TimelineEntry) TableName() string { return "incident_timeline" }

// UsageCounter counts what a tenant consumed in one calendar month (UTC), so that
// quota checks are a single conditional UPDATE.
type UsageCounter struct {
	TenantID       string `gorm:"primaryKey;size:40"`
	Period         string `gorm:"primaryKey;size:7"` // YYYY-MM
	Events         int    `gorm:"not null;default:0"`
	Investigations int    `gorm:"not null;default:0"`
	// LLMTokens is prompt plus completion tokens spent by investigations, for cost
	// attribution.
	LLMTokens int64 `gorm:"column:llm_tokens;not null;default:0"`
}

// All lists every kernel model, in dependency order, for migrations; domains
// add their own with RegisterRows.
func All() []any {
	return []any{&Tenant{}, &User{}, &RefreshToken{}, &PasswordResetToken{}, &Incident{}, &TimelineEntry{}, &UsageCounter{}, &Investigation{}, &InvestigationContext{}, &AgentRun{}, &OutboxEvent{}, &SNSTopic{}, &DataSource{}, &GatheredFact{}, &GroupingSetting{}, &Change{}, &Feedback{}, &RemediationVerification{}}
}
