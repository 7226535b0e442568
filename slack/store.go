package slack

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/causeway/causeway/models"
)

func init() { models.RegisterRows(&Integration{}, &SentMessage{}) }

// Integration states. A stopped integration sends nothing until an admin
// saves it again; LastError says why it stopped.
const (
	StatusActive  = "active"
	StatusStopped = "stopped"
)

// Integration is one tenant's Slack connection. The bot token and the signing
// secret are sealed with the tenant id and their purpose as associated data,
// so a database copy alone cannot use them and a sealed value cannot be moved
// to another row or field. TeamID is the workspace auth.test named for the
// bot token; it is empty on an integration saved before it was recorded,
// until the first signed request or test message learns it.
type Integration struct {
	TenantID         string   `gorm:"primaryKey;size:40"`
	Channel          string   `gorm:"size:100;not null"`
	BotTokenEnc      string   `gorm:"type:text;not null"`
	SigningSecretEnc string   `gorm:"type:text;not null"`
	TeamID           string   `gorm:"size:40;not null;default:''"`
	TeamName         string   `gorm:"size:200;not null;default:''"`
	BotUserID        string   `gorm:"size:40;not null;default:''"`
	MinSeverity      string   `gorm:"size:16;not null"`
	Categories       []string `gorm:"type:text;serializer:json"`
	Status           string   `gorm:"size:16;not null"`
	// LastError is the last error Slack answered a send with; when Status is
	// stopped it is the permanent one that stopped sending.
	LastError   string `gorm:"size:100;not null;default:''"`
	LastErrorAt *time.Time
	// Cursor is the last incident timeline entry the notifier has handled.
	Cursor    uint64 `gorm:"column:timeline_cursor;not null;default:0"`
	CreatedAt time.Time
	UpdatedAt time.Time
}

// TableName names the table after the feature.
func (Integration) TableName() string { return "slack_integrations" }

// SentMessage records one Slack message Causeway owns: which business key it
// stands for, where it is (channel, ts) and what it last showed. PostingAt is
// written before the first chat.postMessage, so a send that finds it set with
// no TS knows a previous attempt may have posted and looks for that message
// before posting again.
type SentMessage struct {
	ID          string `gorm:"primaryKey;size:60"`
	TenantID    string `gorm:"size:40;not null;index"`
	IncidentID  string `gorm:"size:40;not null"`
	Key         string `gorm:"column:message_key;size:200;not null"`
	Channel     string `gorm:"size:100;not null;default:''"`
	TS          string `gorm:"column:ts;size:40;not null;default:''"`
	ContentHash string `gorm:"size:64;not null;default:''"`
	PostingAt   *time.Time
	UpdatedAt   time.Time
}

// TableName names the table after the feature.
func (SentMessage) TableName() string { return "slack_messages" }

// MessageID is deterministic in the tenant, the incident and the message key.
func MessageID(tenantID, incidentID, key string) string {
	sum := sha256.Sum256([]byte(tenantID + "|" + incidentID + "|" + key))
	return "slm_" + hex.EncodeToString(sum[:16])
}

// ErrNotFound is a missing row.
var ErrNotFound = errors.New("not found")

// Store is the integration's tables over the shared database.
type Store struct{ db *gorm.DB }

// NewStore uses db, the handle every store of the process shares.
func NewStore(db *gorm.DB) *Store { return &Store{db: db} }

// take reads the one row q selects, or ErrNotFound.
func take[T any](q *gorm.DB) (*T, error) {
	var row T
	err := q.Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return &row, nil
}

// Integration returns the tenant's integration or ErrNotFound.
func (s *Store) Integration(ctx context.Context, tenantID string) (*Integration, error) {
	return take[Integration](s.db.WithContext(ctx).Where("tenant_id = ?", tenantID))
}

// SaveIntegration inserts or replaces the tenant's integration, keeping the
// cursor of an existing one so reconnecting does not replay old incidents.
// forget drops the records of the messages already sent, in the same
// transaction.
func (s *Store) SaveIntegration(ctx context.Context, in *Integration, forget bool) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if forget {
			if err := tx.Where("tenant_id = ?", in.TenantID).Delete(&SentMessage{}).Error; err != nil {
				return err
			}
		}
		return tx.Clauses(clause.OnConflict{
			Columns: []clause.Column{{Name: "tenant_id"}},
			DoUpdates: clause.AssignmentColumns([]string{"channel", "bot_token_enc", "signing_secret_enc", "team_id", "team_name",
				"bot_user_id", "min_severity", "categories", "status", "last_error", "last_error_at", "updated_at"}),
		}).Create(in).Error
	})
}

// DeleteIntegration removes the tenant's integration and its message records.
func (s *Store) DeleteIntegration(ctx context.Context, tenantID string) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Where("tenant_id = ?", tenantID).Delete(&Integration{})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return ErrNotFound
		}
		return tx.Where("tenant_id = ?", tenantID).Delete(&SentMessage{}).Error
	})
}

// RecordTeam records the workspace of an integration saved before it was
// recorded; one already recorded is left as it is.
func (s *Store) RecordTeam(ctx context.Context, tenantID, teamID, teamName string) error {
	return s.db.WithContext(ctx).Model(&Integration{}).Where("tenant_id = ? AND team_id = ''", tenantID).
		Updates(map[string]any{"team_id": teamID, "team_name": teamName}).Error
}

// RecordError notes Slack's answer to a send; a permanent one stops sending.
func (s *Store) RecordError(ctx context.Context, tenantID, code string, permanent bool, at time.Time) error {
	upd := map[string]any{"last_error": code, "last_error_at": at.UTC()}
	if permanent {
		upd["status"] = StatusStopped
	}
	return s.db.WithContext(ctx).Model(&Integration{}).Where("tenant_id = ?", tenantID).Updates(upd).Error
}

// ActiveIntegrations lists the integrations that send.
func (s *Store) ActiveIntegrations(ctx context.Context) ([]Integration, error) {
	var out []Integration
	err := s.db.WithContext(ctx).Where("status = ?", StatusActive).Order("tenant_id").Find(&out).Error
	return out, err
}

// AdvanceCursor moves the tenant's cursor forward, never back.
func (s *Store) AdvanceCursor(ctx context.Context, tenantID string, to uint64) error {
	return s.db.WithContext(ctx).Model(&Integration{}).Where("tenant_id = ? AND timeline_cursor < ?", tenantID, to).
		Update("timeline_cursor", to).Error
}

// LastTimelineID is the newest timeline entry of the tenant, where a new
// integration's cursor starts.
func (s *Store) LastTimelineID(ctx context.Context, tenantID string) (uint64, error) {
	var id *uint64
	err := s.db.WithContext(ctx).Model(&models.TimelineEntry{}).Where("tenant_id = ?", tenantID).
		Select("MAX(id)").Scan(&id).Error
	if err != nil || id == nil {
		return 0, err
	}
	return *id, nil
}

// TimelineAfter lists the tenant's timeline entries after the cursor, in id order.
func (s *Store) TimelineAfter(ctx context.Context, tenantID string, cursor uint64, limit int) ([]models.TimelineEntry, error) {
	var out []models.TimelineEntry
	err := s.db.WithContext(ctx).Where("tenant_id = ? AND id > ?", tenantID, cursor).Order("id").Limit(limit).Find(&out).Error
	return out, err
}

// TimelineEntry returns one entry of the tenant's incident.
func (s *Store) TimelineEntry(ctx context.Context, tenantID, incidentID string, id uint64) (*models.TimelineEntry, error) {
	return take[models.TimelineEntry](s.db.WithContext(ctx).Where("tenant_id = ? AND incident_id = ? AND id = ?", tenantID, incidentID, id))
}

// Message returns the record of one message or ErrNotFound.
func (s *Store) Message(ctx context.Context, id string) (*SentMessage, error) {
	return take[SentMessage](s.db.WithContext(ctx).Where("id = ?", id))
}

// BeginPosting writes the message's row with PostingAt set, before it is
// posted; an existing row is left as it is.
func (s *Store) BeginPosting(ctx context.Context, m *SentMessage) error {
	return s.db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(m).Error
}

// RecordPosted stores where the message is and what it shows.
func (s *Store) RecordPosted(ctx context.Context, id, channel, ts, hash string, at time.Time) error {
	return s.db.WithContext(ctx).Model(&SentMessage{}).Where("id = ?", id).
		Updates(map[string]any{"channel": channel, "ts": ts, "content_hash": hash, "updated_at": at.UTC()}).Error
}

// PostedKeys returns the keys of the incident's messages that have a ts.
func (s *Store) PostedKeys(ctx context.Context, tenantID, incidentID string) (map[string]bool, error) {
	var keys []string
	err := s.db.WithContext(ctx).Model(&SentMessage{}).Where("tenant_id = ? AND incident_id = ? AND ts <> ''", tenantID, incidentID).
		Pluck("message_key", &keys).Error
	out := make(map[string]bool, len(keys))
	for _, k := range keys {
		out[k] = true
	}
	return out, err
}
