package models

import (
	"context"
	"sort"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// NewIncident is one incident of a batch, with the timeline entry that opens it.
type NewIncident struct {
	Incident *Incident
	First    TimelineEntry
}

// CreateIncidents records a batch of incidents, their first timeline entries and
// the event quota they spend in ONE transaction, so concurrent webhook deliveries
// share a commit (one WAL flush) and one increment of each tenant's counter row
// instead of queueing one by one behind that row's lock.
//
// created[i] tells whether items[i] was inserted; false means its dedup key
// (tenant, source, source alert id) was already taken, by a committed incident or
// by one committed concurrently. Items must carry distinct dedup keys. The batch is
// all or nothing: ErrQuotaExceeded when a tenant's events do not all fit its
// remaining quota or its tenant is missing (nothing is spent; the caller retries
// item by item to find which fit), or a database error.
func (s *Store) CreateIncidents(ctx context.Context, items []NewIncident) (created []bool, err error) {
	created = make([]bool, len(items))
	if len(items) == 0 {
		return created, nil
	}
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		incs := make([]*Incident, len(items))
		ids := make([]string, len(items))
		for i, it := range items {
			incs[i], ids[i] = it.Incident, it.Incident.ID
		}
		// DO NOTHING without a target skips a row that hits the dedup index (the
		// ids are fresh, so nothing else can conflict) and, when the conflicting
		// row is uncommitted, waits for its transaction first.
		res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&incs)
		if res.Error != nil {
			return res.Error
		}
		if int(res.RowsAffected) == len(items) {
			for i := range created {
				created[i] = true
			}
		} else if err := markInserted(tx, ids, created); err != nil {
			return err
		}
		var entries []TimelineEntry
		spend := map[string]int{}
		var tenantIDs []string
		at := map[string]time.Time{}
		for i, it := range items {
			if !created[i] {
				continue
			}
			e := it.First
			e.TenantID, e.IncidentID = it.Incident.TenantID, it.Incident.ID
			entries = append(entries, e)
			tid := it.Incident.TenantID
			if spend[tid] == 0 {
				tenantIDs = append(tenantIDs, tid)
				at[tid] = it.Incident.CreatedAt
			}
			spend[tid]++
		}
		if len(entries) == 0 {
			return nil
		}
		if err := tx.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "dedup_key"}}, DoNothing: true}).
			Create(&entries).Error; err != nil {
			return err
		}
		// The counter rows are the locks every ingest of a tenant shares: take them
		// last, just before commit, once per tenant for the whole batch, and in one
		// order for every writer so two batches never deadlock on them.
		sort.Strings(tenantIDs)
		for _, tid := range tenantIDs {
			if err := consumeEvents(tx, tid, spend[tid], at[tid]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return make([]bool, len(items)), err
	}
	return created, nil
}

// markInserted sets created[i] for the ids this transaction inserted: the ids are
// new, so any of them that exists now is ours.
func markInserted(tx *gorm.DB, ids []string, created []bool) error {
	var found []string
	if err := tx.Model(&Incident{}).Where("id IN ?", ids).Pluck("id", &found).Error; err != nil {
		return err
	}
	in := make(map[string]bool, len(found))
	for _, id := range found {
		in[id] = true
	}
	for i, id := range ids {
		created[i] = in[id]
	}
	return nil
}

// consumeEvents takes n units of the tenant's event quota in one conditional
// upsert that reads the limit from the tenant row itself (0 = unlimited), so the
// check costs no extra round trip. It takes none and returns ErrQuotaExceeded
// when fewer than n are left or the tenant does not exist.
func consumeEvents(tx *gorm.DB, tenantID string, n int, now time.Time) error {
	res := tx.Exec("INSERT INTO usage_counters (tenant_id, period, events, investigations) "+
		"SELECT t.id, ?, ?, 0 FROM tenants t WHERE t.id = ? AND (t.quota_events = 0 OR t.quota_events >= ?) "+
		"ON CONFLICT (tenant_id, period) DO UPDATE SET events = usage_counters.events + excluded.events "+
		"WHERE (SELECT t.quota_events FROM tenants t WHERE t.id = usage_counters.tenant_id) = 0 "+
		"OR usage_counters.events + excluded.events <= (SELECT t.quota_events FROM tenants t WHERE t.id = usage_counters.tenant_id)",
		Period(now), n, tenantID, n)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return ErrQuotaExceeded
	}
	return nil
}
