package delivery

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"time"

	"github.com/causeway/causeway/models"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

func init() {
	models.RegisterRows(&WebhookEndpoint{}, &EventDelivery{}, &DeliveryAttempt{})
}

// Store keeps webhook endpoints, the deliveries of outbox events to them and
// every attempt, in the shared database.
type Store struct{ db *gorm.DB }

// NewStore is the delivery store over the shared database handle.
func NewStore(db *gorm.DB) *Store { return &Store{db: db} }

// Webhook endpoint states. A disabled endpoint (its receiver answered 410 Gone)
// gets no new deliveries.
const (
	EndpointActive   = "active"
	EndpointDisabled = "disabled"
)

// Delivery states. A delivery is pending while its workflow keeps retrying.
const (
	StatusPending   = "pending"
	StatusSucceeded = "succeeded"
	StatusFailed    = "failed"
)

// WebhookEndpoint is a tenant's subscription to outbound events. The signing
// secret is stored sealed with the endpoint id as associated data, so a database
// copy alone cannot sign events and a sealed secret cannot be moved to another row.
type WebhookEndpoint struct {
	ID             string   `gorm:"primaryKey;size:40"`
	TenantID       string   `gorm:"size:40;not null;index"`
	URL            string   `gorm:"size:2000;not null"`
	Events         []string `gorm:"type:text;serializer:json"`
	SecretEnc      string   `gorm:"type:text;not null"`
	Status         string   `gorm:"size:16;not null"`
	DisabledReason string   `gorm:"type:text;not null;default:''"`
	CreatedAt      time.Time
}

// EventDelivery is one event on its way to one endpoint: the relay's fan-out
// writes it, and WorkflowStartedAt stays nil until its delivery workflow is
// known to exist, so a crash between the two is repaired by the next sweep.
type EventDelivery struct {
	ID                string `gorm:"primaryKey;size:60"`
	TenantID          string `gorm:"size:40;not null"`
	EventID           string `gorm:"size:60;not null;uniqueIndex:idx_delivery_event_endpoint,priority:1"`
	EndpointID        string `gorm:"size:40;not null;uniqueIndex:idx_delivery_event_endpoint,priority:2"`
	EventType         string `gorm:"size:60;not null"`
	Status            string `gorm:"size:16;not null"`
	Attempts          int    `gorm:"not null;default:0"`
	CreatedAt         time.Time
	CompletedAt       *time.Time
	WorkflowStartedAt *time.Time `gorm:"index:idx_delivery_unstarted,where:workflow_started_at IS NULL"`
}

// DeliveryAttempt is one HTTP attempt of a delivery, kept for the deliveries log.
// (DeliveryID, Attempt) is unique, so a retried recording activity writes it once.
type DeliveryAttempt struct {
	ID         uint64    `gorm:"primaryKey;autoIncrement"`
	TenantID   string    `gorm:"size:40;not null"`
	DeliveryID string    `gorm:"size:60;not null;uniqueIndex:idx_attempt_delivery,priority:1"`
	Attempt    int       `gorm:"not null;uniqueIndex:idx_attempt_delivery,priority:2"`
	EndpointID string    `gorm:"size:40;not null;index:idx_attempt_endpoint,priority:1"`
	EventID    string    `gorm:"size:60;not null"`
	EventType  string    `gorm:"size:60;not null"`
	StatusCode int       `gorm:"not null;default:0"`
	LatencyMs  int64     `gorm:"not null;default:0"`
	Error      string    `gorm:"type:text;not null;default:''"`
	At         time.Time `gorm:"not null;index:idx_attempt_endpoint,priority:2"`
}

// DeliveryID is deterministic in the event and the endpoint, so fanning the same
// event out twice names the same delivery.
func DeliveryID(eventID, endpointID string) string {
	sum := sha256.Sum256([]byte(eventID + "|" + endpointID))
	return "dlv_" + hex.EncodeToString(sum[:16])
}

// Subscribed reports whether the endpoint wants events of kind.
func (e *WebhookEndpoint) Subscribed(kind string) bool { return slices.Contains(e.Events, kind) }

// CreateWebhookEndpoint stores a new endpoint.
func (s *Store) CreateWebhookEndpoint(ctx context.Context, e *WebhookEndpoint) error {
	return s.db.WithContext(ctx).Create(e).Error
}

// CountWebhookEndpoints returns how many endpoints the tenant has, active or
// disabled, so the service can hold a tenant to its endpoint limit.
func (s *Store) CountWebhookEndpoints(ctx context.Context, tenantID string) (int64, error) {
	var n int64
	err := s.db.WithContext(ctx).Model(&WebhookEndpoint{}).Where("tenant_id = ?", tenantID).Count(&n).Error
	return n, err
}

// ListWebhookEndpoints returns the tenant's endpoints, oldest first.
func (s *Store) ListWebhookEndpoints(ctx context.Context, tenantID string) ([]WebhookEndpoint, error) {
	var out []WebhookEndpoint
	err := s.db.WithContext(ctx).Where("tenant_id = ?", tenantID).Order("id").Find(&out).Error
	return out, err
}

// GetWebhookEndpoint returns the tenant's endpoint; another tenant's id is
// models.ErrNotFound, exactly like a missing one.
func (s *Store) GetWebhookEndpoint(ctx context.Context, tenantID, id string) (*WebhookEndpoint, error) {
	return models.FirstRow[WebhookEndpoint](s.db.WithContext(ctx).Where("tenant_id = ? AND id = ?", tenantID, id))
}

// DeleteWebhookEndpoint removes the endpoint; its in-flight deliveries find it
// gone and stop. The attempt log goes with it.
func (s *Store) DeleteWebhookEndpoint(ctx context.Context, tenantID, id string) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Where("tenant_id = ? AND id = ?", tenantID, id).Delete(&WebhookEndpoint{})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return models.ErrNotFound
		}
		return tx.Where("endpoint_id = ?", id).Delete(&DeliveryAttempt{}).Error
	})
}

// DeliveryAttempts returns the endpoint's attempt log, newest first, at most limit.
func (s *Store) DeliveryAttempts(ctx context.Context, tenantID, endpointID string, limit int) ([]DeliveryAttempt, error) {
	var out []DeliveryAttempt
	err := s.db.WithContext(ctx).Where("tenant_id = ? AND endpoint_id = ?", tenantID, endpointID).
		Order("at DESC, id DESC").Limit(limit).Find(&out).Error
	return out, err
}

// FanOutEvents turns up to limit undispatched outbox events into one delivery per
// subscribed active endpoint and marks each event dispatched, event by event in
// its own transaction. The active endpoints of the page's tenants are read once
// per page, not once per event. The unique (event, endpoint) index makes a
// repeated fan-out of the same event a no-op. It returns how many events it
// handled.
func (s *Store) FanOutEvents(ctx context.Context, now time.Time, limit int) (int, error) {
	db := s.db.WithContext(ctx)
	var pending []models.OutboxEvent
	if err := db.Where("delivered_at IS NULL").Order("created_at").Limit(limit).Find(&pending).Error; err != nil {
		return 0, err
	}
	if len(pending) == 0 {
		return 0, nil
	}
	tenants := make([]string, 0, len(pending))
	for _, evt := range pending {
		tenants = append(tenants, evt.TenantID)
	}
	slices.Sort(tenants)
	var eps []WebhookEndpoint
	if err := db.Where("tenant_id IN ? AND status = ?", slices.Compact(tenants), EndpointActive).Order("id").Find(&eps).Error; err != nil {
		return 0, err
	}
	byTenant := map[string][]WebhookEndpoint{}
	for _, ep := range eps {
		byTenant[ep.TenantID] = append(byTenant[ep.TenantID], ep)
	}
	for i := range pending {
		if err := s.fanOut(ctx, &pending[i], byTenant[pending[i].TenantID], now); err != nil {
			return i, err
		}
	}
	return len(pending), nil
}

func (s *Store) fanOut(ctx context.Context, evt *models.OutboxEvent, eps []WebhookEndpoint, now time.Time) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		for _, ep := range eps {
			if !ep.Subscribed(evt.Type) {
				continue
			}
			d := EventDelivery{ID: DeliveryID(evt.ID, ep.ID), TenantID: evt.TenantID, EventID: evt.ID,
				EndpointID: ep.ID, EventType: evt.Type, Status: StatusPending, CreatedAt: now}
			if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&d).Error; err != nil {
				return err
			}
		}
		return tx.Model(&models.OutboxEvent{}).Where("id = ? AND delivered_at IS NULL", evt.ID).Update("delivered_at", now).Error
	})
}

// DeliveriesWithoutWorkflow lists deliveries created before olderThan whose
// workflow is not known to exist yet, oldest first: the relay's start queue.
func (s *Store) DeliveriesWithoutWorkflow(ctx context.Context, olderThan time.Time, limit int) ([]EventDelivery, error) {
	var out []EventDelivery
	err := s.db.WithContext(ctx).Where("workflow_started_at IS NULL AND created_at <= ?", olderThan).
		Order("created_at, id").Limit(limit).Find(&out).Error
	return out, err
}

// MarkDeliveryStarted records that the delivery's workflow exists.
func (s *Store) MarkDeliveryStarted(ctx context.Context, id string, at time.Time) error {
	return s.db.WithContext(ctx).Model(&EventDelivery{}).Where("id = ? AND workflow_started_at IS NULL", id).
		Update("workflow_started_at", at).Error
}

// DeliveryBundle is everything one delivery attempt needs.
type DeliveryBundle struct {
	Delivery EventDelivery
	Event    models.OutboxEvent
	Endpoint WebhookEndpoint
}

// LoadDelivery reads a delivery with its event and endpoint. A deleted endpoint
// is models.ErrNotFound.
func (s *Store) LoadDelivery(ctx context.Context, id string) (*DeliveryBundle, error) {
	db := s.db.WithContext(ctx)
	d, err := models.FirstRow[EventDelivery](db.Where("id = ?", id))
	if err != nil {
		return nil, err
	}
	evt, err := models.FirstRow[models.OutboxEvent](db.Where("id = ?", d.EventID))
	if err != nil {
		return nil, err
	}
	ep, err := models.FirstRow[WebhookEndpoint](db.Where("id = ?", d.EndpointID))
	if err != nil {
		return nil, err
	}
	return &DeliveryBundle{Delivery: *d, Event: *evt, Endpoint: *ep}, nil
}

// RecordDeliveryAttempt writes one attempt and moves the delivery to status
// (pending while it will be retried) in one transaction. A non-empty
// disableReason also disables the endpoint (its receiver said it is gone for
// good) in that same transaction, so the attempt that disabled an endpoint is
// never on record without the endpoint being disabled, or the other way round.
// A retried recording of the same attempt number changes nothing.
func (s *Store) RecordDeliveryAttempt(ctx context.Context, a *DeliveryAttempt, status, disableReason string) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(a)
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error
		}
		updates := map[string]any{"attempts": a.Attempt, "status": status}
		if status != StatusPending {
			updates["completed_at"] = a.At
		}
		if err := tx.Model(&EventDelivery{}).Where("id = ?", a.DeliveryID).Updates(updates).Error; err != nil {
			return err
		}
		if disableReason == "" {
			return nil
		}
		return tx.Model(&WebhookEndpoint{}).Where("id = ?", a.EndpointID).
			Updates(map[string]any{"status": EndpointDisabled, "disabled_reason": disableReason}).Error
	})
}

// FinishDelivery closes a delivery without a new attempt (its endpoint is gone).
func (s *Store) FinishDelivery(ctx context.Context, id, status string, at time.Time) error {
	return s.db.WithContext(ctx).Model(&EventDelivery{}).Where("id = ? AND status = ?", id, StatusPending).
		Updates(map[string]any{"status": status, "completed_at": at}).Error
}
