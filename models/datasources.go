package models

import (
	"context"
	"time"

	"gorm.io/gorm/clause"

	"github.com/causeway/causeway/analyzer"
)

// DataSourceActive is the status of a connected data source.
const DataSourceActive = "active"

// DataSource is a system a tenant lets its agents query. URL is stored as it
// is shown (a password inside it masked); the credential is sealed in AuthEnc
// with the source id as associated data, so a database copy alone cannot use
// it and a sealed credential cannot be moved to another row.
type DataSource struct {
	ID        string         `gorm:"primaryKey;size:40"`
	TenantID  string         `gorm:"size:40;not null;index"`
	Name      string         `gorm:"size:200;not null"`
	Type      string         `gorm:"size:32;not null"`
	URL       string         `gorm:"size:2000;not null;default:''"`
	Settings  map[string]any `gorm:"type:text;serializer:json"`
	AuthEnc   string         `gorm:"type:text;not null;default:''"`
	Status    string         `gorm:"size:16;not null"`
	CreatedAt time.Time
}

// CreateDataSource stores a new data source.
func (s *Store) CreateDataSource(ctx context.Context, d *DataSource) error {
	return s.db.WithContext(ctx).Create(d).Error
}

// CountDataSources returns how many sources the tenant has connected.
func (s *Store) CountDataSources(ctx context.Context, tenantID string) (int64, error) {
	var n int64
	err := s.db.WithContext(ctx).Model(&DataSource{}).Where("tenant_id = ?", tenantID).Count(&n).Error
	return n, err
}

// ListDataSources returns the tenant's sources, oldest first.
func (s *Store) ListDataSources(ctx context.Context, tenantID string) ([]DataSource, error) {
	var out []DataSource
	err := s.db.WithContext(ctx).Where("tenant_id = ?", tenantID).Order("id").Find(&out).Error
	return out, err
}

// GetDataSource returns the tenant's source; another tenant's id is
// ErrNotFound, exactly like a missing one.
func (s *Store) GetDataSource(ctx context.Context, tenantID, id string) (*DataSource, error) {
	return FirstRow[DataSource](s.db.WithContext(ctx).Where("tenant_id = ? AND id = ?", tenantID, id))
}

// DeleteDataSource removes the tenant's source; ErrNotFound when the tenant
// has none with that id.
func (s *Store) DeleteDataSource(ctx context.Context, tenantID, id string) error {
	res := s.db.WithContext(ctx).Where("tenant_id = ? AND id = ?", tenantID, id).Delete(&DataSource{})
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// GatheredFact is the answer one data-source query gave an investigation
// pass: its readings, their rendering and where they came from. The id is
// the pass and the query's key, so a retried query stores its answer once.
// Agents and the synthesis read the facts the pass accepted, by key.
type GatheredFact struct {
	ID              string             `gorm:"primaryKey;size:400"`
	TenantID        string             `gorm:"size:40;not null"`
	InvestigationID string             `gorm:"size:60;not null;index"`
	DataSourceID    string             `gorm:"size:40;not null"`
	Type            string             `gorm:"size:32;not null"`
	Query           string             `gorm:"type:text;not null"`
	Roles           []string           `gorm:"type:text;serializer:json"`
	Text            string             `gorm:"type:text;not null"`
	Readings        []analyzer.Reading `gorm:"type:text;serializer:json"`
	Note            string             `gorm:"type:text;not null;default:''"`
	// Measured marks an answer whose Text renders its Readings (see
	// analyzer.Excerpt); raw text from a source is not measured.
	Measured  bool `gorm:"not null;default:false"`
	CreatedAt time.Time
}

// GatheredFactID is the id of a query's answer within a pass.
func GatheredFactID(investigationID, key string) string { return investigationID + "/" + key }

// SaveGatheredFact stores a query's answer once and returns the stored one:
// a retry keeps the first answer.
func (s *Store) SaveGatheredFact(ctx context.Context, f *GatheredFact) (*GatheredFact, error) {
	res := s.db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(f)
	if res.Error != nil {
		return nil, res.Error
	}
	if res.RowsAffected == 1 {
		return f, nil
	}
	return FirstRow[GatheredFact](s.db.WithContext(ctx).Where("id = ?", f.ID))
}

// GatheredFacts returns the answers of the pass's queries named by keys, in
// the order of keys; keys without a stored answer are skipped.
func (s *Store) GatheredFacts(ctx context.Context, tenantID, investigationID string, keys []string) ([]GatheredFact, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	ids := make([]string, len(keys))
	for i, k := range keys {
		ids[i] = GatheredFactID(investigationID, k)
	}
	var rows []GatheredFact
	if err := s.db.WithContext(ctx).Where("tenant_id = ? AND investigation_id = ? AND id IN ?", tenantID, investigationID, ids).Find(&rows).Error; err != nil {
		return nil, err
	}
	byID := make(map[string]GatheredFact, len(rows))
	for _, r := range rows {
		byID[r.ID] = r
	}
	out := make([]GatheredFact, 0, len(rows))
	for _, id := range ids {
		if r, ok := byID[id]; ok {
			out = append(out, r)
		}
	}
	return out, nil
}
