package models

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// GroupingSetting is a tenant's choice about alert grouping (README, "Alert
// grouping"). A tenant without a row has grouping off: the interface we honour
// creates one incident per accepted, non-duplicate alert unless told otherwise.
type GroupingSetting struct {
	TenantID      string    `gorm:"primaryKey;size:40"`
	Enabled       bool      `gorm:"not null"`
	WindowSeconds int       `gorm:"not null"`
	UpdatedAt     time.Time `gorm:"not null"`
}

// GroupingSettingFor returns the tenant's grouping setting; ErrNotFound when it
// never chose one.
func (s *Store) GroupingSettingFor(ctx context.Context, tenantID string) (*GroupingSetting, error) {
	return FirstRow[GroupingSetting](s.db.WithContext(ctx).Where("tenant_id = ?", tenantID))
}

// SetGroupingSetting creates or replaces the tenant's grouping setting.
func (s *Store) SetGroupingSetting(ctx context.Context, g *GroupingSetting) error {
	return s.db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "tenant_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"enabled", "window_seconds", "updated_at"}),
	}).Create(g).Error
}

// TimelineAlertGrouped is the timeline kind of an alert that joined a running
// incident instead of opening its own.
const TimelineAlertGrouped = "alert_grouped"

// GroupSpec is one alert offered to a tenant that groups alerts.
type GroupSpec struct {
	// Incident is the incident the alert opens when nothing is there to join;
	// its CreatedAt is the alert's arrival.
	Incident *Incident
	// First is that incident's opening timeline entry.
	First TimelineEntry
	// Window is how far back an incident opened from an alert may be to be
	// joined.
	Window time.Duration
	// Grouped is the entry recorded on the incident the alert joins; its
	// DedupKey identifies the alert (so a redelivery is found as a duplicate).
	Grouped TimelineEntry
	// Context is what the joined incident's investigation passes read about
	// the alert; it is stored only while the incident's context fits Limits.
	Context string
	Limits  ContextLimits
}

// GroupOutcome is what became of a grouped alert.
type GroupOutcome struct {
	Incident *Incident // the incident opened, joined, or (Duplicate) found
	Joined   bool      // the alert joined a running incident
	// Duplicate means the alert was already received: as an incident of its
	// own or as a grouped alert of Incident.
	Duplicate bool
}

// GroupAlert opens an incident for the alert or joins it to the tenant's
// newest unresolved incident of the same service opened from an alert within
// the window, in one transaction. Alerts of one tenant and service take a lock
// first (on PostgreSQL a transaction-scoped advisory lock; SQLite has a single
// writer), so two concurrent alerts can never both open an incident, nor both
// miss the one the other opened; the duplicate checks run under that lock too.
// Joining adds the alert_grouped entry, raises the incident's AlertCount and
// spends one event of quota; ErrQuotaExceeded when none is left.
func (s *Store) GroupAlert(ctx context.Context, g GroupSpec) (GroupOutcome, error) {
	var out GroupOutcome
	inc := g.Incident
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		out = GroupOutcome{}
		if s.dialect == "postgres" {
			if err := tx.Exec("SELECT pg_advisory_xact_lock(hashtext(?))", "group:"+inc.TenantID+":"+inc.Service).Error; err != nil {
				return err
			}
		}
		if dup, err := groupedBefore(tx, g); err != nil || dup != nil {
			if dup != nil {
				out = GroupOutcome{Incident: dup, Duplicate: true}
			}
			return err
		}
		anchor, err := FirstRow[Incident](tx.Where("tenant_id = ? AND service = ? AND source <> ? AND status <> ? AND created_at >= ?",
			inc.TenantID, inc.Service, SourceManual, StatusResolved, inc.CreatedAt.Add(-g.Window)).Order("created_at DESC, id DESC"))
		switch {
		case errors.Is(err, ErrNotFound):
			if err := tx.Create(inc).Error; err != nil {
				return err
			}
			first := g.First
			first.TenantID, first.IncidentID = inc.TenantID, inc.ID
			if err := InsertTimeline(tx, &first); err != nil {
				return err
			}
			out = GroupOutcome{Incident: inc}
			return consumeEvents(tx, inc.TenantID, 1, inc.CreatedAt)
		case err != nil:
			return err
		}
		if err := joinAlert(tx, g, anchor); err != nil {
			return err
		}
		out = GroupOutcome{Incident: anchor, Joined: true}
		return consumeEvents(tx, anchor.TenantID, 1, inc.CreatedAt)
	})
	if IsUniqueViolation(err) {
		// Only an alert ingested by a replica that did not group (the setting
		// changed moments ago) can get past the checks above.
		return GroupOutcome{}, ErrConflict
	}
	if err != nil {
		return GroupOutcome{}, err
	}
	return out, nil
}

// groupedBefore finds the incident this alert already went to: the one opened
// from the same source alert, or the one its grouped entry joined (a retried
// delivery). Nil when the alert is new.
func groupedBefore(tx *gorm.DB, g GroupSpec) (*Incident, error) {
	inc := g.Incident
	if inc.SourceAlertID != "" {
		prev, err := FirstRow[Incident](tx.Where("tenant_id = ? AND source = ? AND source_alert_id = ? AND source_alert_id <> ''",
			inc.TenantID, inc.Source, inc.SourceAlertID))
		if err == nil || !errors.Is(err, ErrNotFound) {
			return prev, err
		}
	}
	prev, err := FirstRow[TimelineEntry](tx.Where("dedup_key = ?", g.Grouped.DedupKey))
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return FirstRow[Incident](tx.Where("tenant_id = ? AND id = ?", prev.TenantID, prev.IncidentID))
}

// joinAlert adds the alert to anchor: the alert_grouped entry, one more alert
// counted, and the alert's text as investigation context while the incident's
// context limits allow.
func joinAlert(tx *gorm.DB, g GroupSpec, anchor *Incident) error {
	inc := g.Incident
	e := g.Grouped
	e.TenantID, e.IncidentID = anchor.TenantID, anchor.ID
	if err := InsertTimeline(tx, &e); err != nil {
		return err
	}
	if err := tx.Model(&Incident{}).Where("id = ?", anchor.ID).
		Updates(map[string]any{"alert_count": gorm.Expr("alert_count + 1"), "updated_at": inc.CreatedAt}).Error; err != nil {
		return err
	}
	anchor.AlertCount++
	anchor.UpdatedAt = inc.CreatedAt
	if g.Context == "" {
		return nil
	}
	n, b, err := ContextUsageIn(tx, anchor.TenantID, anchor.ID)
	if err != nil || !g.Limits.Admit(n, b, len(g.Context)) {
		return err
	}
	c := InvestigationContext{TenantID: anchor.TenantID, IncidentID: anchor.ID, Content: g.Context,
		Actor: e.Actor, CreatedAt: inc.CreatedAt, DedupKey: e.DedupKey}
	return InsertContext(tx, &c)
}
