package models

import (
	"context"
	"time"

	"gorm.io/gorm/clause"
)

// SNSTopic is an SNS topic whose subscription a tenant confirmed. Notifications
// are accepted only from these: a genuinely signed SNS message from any topic
// could otherwise be replayed to any tenant's endpoint.
type SNSTopic struct {
	TenantID    string    `gorm:"primaryKey;size:40"`
	TopicArn    string    `gorm:"primaryKey;size:300"`
	APIKeyID    string    `gorm:"size:40;not null"`
	ConfirmedAt time.Time `gorm:"not null"`
}

// AllowSNSTopic records a confirmed subscription; confirming again keeps the
// first record.
func (s *Store) AllowSNSTopic(ctx context.Context, t *SNSTopic) error {
	return s.db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(t).Error
}

// SNSTopicAllowed reports whether the tenant confirmed a subscription to topic.
func (s *Store) SNSTopicAllowed(ctx context.Context, tenantID, topicArn string) (bool, error) {
	var n int64
	err := s.db.WithContext(ctx).Model(&SNSTopic{}).Where("tenant_id = ? AND topic_arn = ?", tenantID, topicArn).Count(&n).Error
	return n > 0, err
}
