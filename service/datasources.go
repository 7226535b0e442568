package service

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/datasources"
	"github.com/causeway/causeway/errcode"
	"github.com/causeway/causeway/models"
)

// MaxDataSourcesPerTenant bounds the sources a pass may query, and with them
// its plan.
const MaxDataSourcesPerTenant = 20

// DataSources serves the systems a tenant connects for its agents to query.
// Credentials exist in plaintext only on their way in and inside the calls
// that use them.
type DataSources struct {
	store  *models.Store
	sealer *auth.Sealer
	conn   *datasources.Connector
	now    func() time.Time
}

// NewDataSources wires the service; conn holds the networks policy and the
// limits every call to a source obeys, the test call included.
func NewDataSources(store *models.Store, sealer *auth.Sealer, conn *datasources.Connector) *DataSources {
	return &DataSources{store: store, sealer: sealer, conn: conn, now: time.Now}
}

// CreateDataSourceInput is the body of POST /v1/datasources. Auth and
// Settings stay raw so a wrong shape is answered in the API's words.
type CreateDataSourceInput struct {
	Name     string          `json:"name"`
	Type     string          `json:"type"`
	URL      string          `json:"url"`
	Auth     json.RawMessage `json:"auth"`
	Settings json.RawMessage `json:"settings"`
}

// TestResult is the answer of POST /v1/datasources/{id}/test.
type TestResult struct {
	OK        bool   `json:"ok"`
	LatencyMs int64  `json:"latencyMs"`
	Message   string `json:"message"`
}

// Create validates and stores a source. Bad input names its field and stores
// nothing.
func (s *DataSources) Create(ctx context.Context, p auth.Principal, in CreateDataSourceInput) (*models.DataSource, error) {
	spec := datasources.Spec{TenantID: p.TenantID, Name: in.Name, Type: in.Type, URL: in.URL}
	if raw := bytes.TrimSpace(in.Auth); len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		var a datasources.Auth
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&a); err != nil {
			return nil, errcode.Invalid("auth must be an object with bearerToken, username and password, or headers")
		}
		spec.Auth = &a
	}
	if raw := bytes.TrimSpace(in.Settings); len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		if err := json.Unmarshal(raw, &spec.Settings); err != nil || spec.Settings == nil {
			return nil, errcode.Invalid("settings must be an object")
		}
	}
	cfg, err := s.conn.Prepare(ctx, spec)
	var fe *datasources.FieldError
	if errors.As(err, &fe) {
		return nil, errcode.Invalid("%s %s", fe.Field, fe.Message)
	}
	if errors.Is(err, datasources.ErrGrantsUnreadable) {
		return nil, errcode.Down("the database", err)
	}
	if err != nil {
		return nil, err
	}
	n, err := s.store.CountDataSources(ctx, p.TenantID)
	if err != nil {
		return nil, errcode.Down("the database", err)
	}
	if n >= MaxDataSourcesPerTenant {
		return nil, errcode.Invalid("a tenant may connect at most %d data sources; delete one first", MaxDataSourcesPerTenant)
	}
	d := models.DataSource{ID: models.NewID("ds"), TenantID: p.TenantID, Name: cfg.Name, Type: cfg.Type, URL: cfg.URL,
		Settings: cfg.Settings, Status: models.DataSourceActive, CreatedAt: s.now().UTC()}
	if d.AuthEnc, err = datasources.Seal(cfg.Auth, d.ID, s.sealer); err != nil {
		return nil, err
	}
	if err := s.store.CreateDataSource(ctx, &d); err != nil {
		return nil, errcode.Down("the database", err)
	}
	return &d, nil
}

// List returns the tenant's sources without credentials.
func (s *DataSources) List(ctx context.Context, p auth.Principal) ([]models.DataSource, error) {
	out, err := s.store.ListDataSources(ctx, p.TenantID)
	if err != nil {
		return nil, errcode.Down("the database", err)
	}
	return out, nil
}

// Delete removes a source; another tenant's id is reported missing.
func (s *DataSources) Delete(ctx context.Context, p auth.Principal, id string) error {
	err := s.store.DeleteDataSource(ctx, p.TenantID, id)
	if errors.Is(err, models.ErrNotFound) {
		return errcode.New(errcode.NotFound, "no data source with id %q", id)
	}
	if err != nil {
		return errcode.Down("the database", err)
	}
	return nil
}

// Test makes one real round trip to the source, under the tenant's networks.
// An unreachable or refusing system is an answer (ok false, and why in one of
// datasources.Describe's fixed sentences), never a failure of the request.
func (s *DataSources) Test(ctx context.Context, p auth.Principal, id string) (TestResult, error) {
	d, err := s.store.GetDataSource(ctx, p.TenantID, id)
	if errors.Is(err, models.ErrNotFound) {
		return TestResult{}, errcode.New(errcode.NotFound, "no data source with id %q", id)
	}
	if err != nil {
		return TestResult{}, errcode.Down("the database", err)
	}
	cfg, err := datasources.Unseal(d, s.sealer)
	if err != nil {
		return TestResult{OK: false, Message: "the stored credential cannot be opened with this server's secrets key; delete and re-create the source"}, nil
	}
	start := s.now()
	msg, err := s.conn.Test(ctx, cfg)
	if errors.Is(err, datasources.ErrGrantsUnreadable) {
		return TestResult{}, errcode.Down("the database", err)
	}
	res := TestResult{OK: err == nil, LatencyMs: s.now().Sub(start).Milliseconds(), Message: msg}
	if err != nil {
		res.Message = cfg.Auth.Scrub(datasources.Describe(err))
	}
	return res, nil
}
