package datasources

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/models"
)

// Seal encrypts a source's credential for storage, bound to the source id;
// "" when there is none.
func Seal(a Auth, sourceID string, s *auth.Sealer) (string, error) {
	if a.IsZero() {
		return "", nil
	}
	b, err := json.Marshal(a)
	if err != nil {
		return "", err
	}
	return s.Encrypt(b, []byte(sourceID)), nil
}

// Unseal is the Config of a stored source with its credential opened.
func Unseal(d *models.DataSource, s *auth.Sealer) (Config, error) {
	cfg := Config{ID: d.ID, Name: d.Name, Type: d.Type, URL: d.URL, Settings: d.Settings, TenantID: d.TenantID}
	if d.AuthEnc == "" {
		return cfg, nil
	}
	plain, err := s.Decrypt(d.AuthEnc, []byte(d.ID))
	if err != nil {
		return Config{}, fmt.Errorf("data source %s: %w", d.ID, err)
	}
	if err := json.Unmarshal(plain, &cfg.Auth); err != nil {
		return Config{}, fmt.Errorf("data source %s: sealed credential unreadable", d.ID)
	}
	return cfg, nil
}

// Scrub replaces every secret of a in msg, so an error a system echoes back
// (a URL, a header) never carries the credential into a response, a log or
// workflow history.
func (a Auth) Scrub(msg string) string {
	secrets := []string{a.BearerToken, a.Password}
	for _, v := range a.Headers {
		secrets = append(secrets, v)
	}
	for _, s := range secrets {
		if len(s) >= 3 {
			msg = strings.ReplaceAll(msg, s, "****")
		}
	}
	return msg
}
