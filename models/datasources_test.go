package models_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/internal/testdb"
	"github.com/causeway/causeway/models"
)

func TestGatheredFactsAreStoredOnceAndReadByKey(t *testing.T) {
	s := testdb.Open(t)
	ctx := context.Background()
	fact := func(key, text string) *models.GatheredFact {
		return &models.GatheredFact{ID: models.GatheredFactID("inv_1", key), TenantID: "ten_1", InvestigationID: "inv_1",
			DataSourceID: "ds_1", Type: "prometheus", Query: "up", Roles: []string{"metrics"}, Text: text, Measured: true,
			Readings: []analyzer.Reading{{Signal: analyzer.SignalCacheUp, Value: 1, Line: text}}, CreatedAt: time.Now()}
	}
	if _, err := s.SaveGatheredFact(ctx, fact("ds_1/a", "first")); err != nil {
		t.Fatal(err)
	}
	got, err := s.SaveGatheredFact(ctx, fact("ds_1/a", "retry"))
	if err != nil || got.Text != "first" {
		t.Fatalf("a retried save: %+v, %v; want the first answer kept", got, err)
	}
	if _, err := s.SaveGatheredFact(ctx, fact("ds_1/b", "second")); err != nil {
		t.Fatal(err)
	}
	facts, err := s.GatheredFacts(ctx, "ten_1", "inv_1", []string{"ds_1/b", "ds_1/missing", "ds_1/a"})
	if err != nil || len(facts) != 2 || facts[0].Text != "second" || facts[1].Text != "first" || len(facts[1].Readings) != 1 {
		t.Fatalf("facts by key: %+v, %v", facts, err)
	}
	if other, _ := s.GatheredFacts(ctx, "ten_2", "inv_1", []string{"ds_1/a"}); len(other) != 0 {
		t.Fatal("another tenant read the pass's facts")
	}
}

func TestDataSourcesBelongToTheirTenant(t *testing.T) {
	s := testdb.Open(t)
	ctx := context.Background()
	d := &models.DataSource{ID: "ds_x", TenantID: "ten_1", Name: "p", Type: "prometheus", URL: "http://p", Status: models.DataSourceActive, CreatedAt: time.Now()}
	if err := s.CreateDataSource(ctx, d); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetDataSource(ctx, "ten_2", "ds_x"); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("another tenant's get: %v", err)
	}
	if err := s.DeleteDataSource(ctx, "ten_2", "ds_x"); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("another tenant's delete: %v", err)
	}
	if n, _ := s.CountDataSources(ctx, "ten_1"); n != 1 {
		t.Fatalf("count %d", n)
	}
	if err := s.DeleteDataSource(ctx, "ten_1", "ds_x"); err != nil {
		t.Fatal(err)
	}
}
