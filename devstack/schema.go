package devstack

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/persistence/sql/sqlplugin"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	sqliteschema "go.temporal.io/server/schema/sqlite"
	"google.golang.org/protobuf/types/known/durationpb"

	// The Temporal sqlite plugin registers this driver too; importing it here
	// makes the dependency of openSchemaDB explicit.
	_ "modernc.org/sqlite"
)

const (
	// dbFileName is the SQLite file kept under Options.DataDir.
	dbFileName = "temporal.db"
	// namespaceRetention is how long closed workflows stay visible; three days
	// covers a long weekend of investigations in a dev environment.
	namespaceRetention = 72 * time.Hour
)

// sqlConfig describes the SQLite store for the server: a private in-memory
// database when dataDir is empty, otherwise DataDir/temporal.db.
func sqlConfig(dataDir string) (*config.SQL, string, error) {
	if dataDir == "" {
		// The plugin creates the schema itself whenever it opens an in-memory
		// database. The random name keeps several stacks in one process apart.
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, "", err
		}
		return &config.SQL{
			PluginName:        sqliteplugin.PluginName,
			DatabaseName:      "devstack-" + hex.EncodeToString(b[:]),
			ConnectAttributes: map[string]string{"mode": "memory", "cache": "shared"},
		}, "", nil
	}
	dir, err := filepath.Abs(dataDir)
	if err != nil {
		return nil, "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, "", fmt.Errorf("create data dir: %w", err)
	}
	path := filepath.Join(dir, dbFileName)
	return &config.SQL{
		PluginName: sqliteplugin.PluginName,
		// The plugin builds "file:<DatabaseName>?<attributes>", a SQLite URI,
		// so characters with a meaning in URIs must be percent-encoded.
		DatabaseName:      uriPathEscaper.Replace(path),
		ConnectAttributes: map[string]string{"mode": "rwc"},
	}, path, nil
}

var uriPathEscaper = strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23")

// ensureSchema creates the Temporal tables in the database file unless they
// already exist. Creation runs in one transaction, so a crash part-way leaves
// an empty file that the next start sets up again rather than a half schema.
func ensureSchema(cfg *config.SQL) error {
	db, err := sql.Open("sqlite", "file:"+cfg.DatabaseName+"?mode=rwc")
	if err != nil {
		return fmt.Errorf("open %s: %w", cfg.DatabaseName, err)
	}
	defer func() { _ = db.Close() }()
	db.SetMaxOpenConns(1)

	ctx := context.Background()
	var objects, namespaces int
	err = db.QueryRowContext(ctx,
		`SELECT count(*), coalesce(sum(type = 'table' AND name = 'namespaces'), 0) FROM sqlite_master`,
	).Scan(&objects, &namespaces)
	if err != nil {
		return fmt.Errorf("inspect %s: %w", cfg.DatabaseName, err)
	}
	switch {
	case namespaces > 0:
		return nil
	case objects > 0:
		return fmt.Errorf("%s holds tables that are not a Temporal schema; move it away to start afresh", cfg.DatabaseName)
	}

	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if err := sqliteschema.SetupSchemaOnDB(txSchemaDB{tx: tx}); err != nil {
		return fmt.Errorf("create schema: %w", err)
	}
	return tx.Commit()
}

// txSchemaDB lets the server's schema helper run inside a transaction. The
// helper only ever calls Exec; the embedded interface is left nil because no
// other method is reachable from it.
type txSchemaDB struct {
	sqlplugin.AdminDB
	tx *sql.Tx
}

func (d txSchemaDB) Exec(stmt string, args ...any) error {
	_, err := d.tx.Exec(stmt, args...)
	return err
}

// registerNamespace writes the namespace straight into the store before the
// server starts, so the server's namespace cache knows it from the first
// request instead of after its periodic refresh. Existing namespaces are left
// untouched, which keeps restarts on the same data dir idempotent.
func registerNamespace(cfg *config.SQL, clusterName, namespace string) error {
	ns, err := sqliteschema.NewNamespaceConfig(clusterName, namespace, false, nil)
	if err != nil {
		return err
	}
	ns.Detail.Config.Retention = durationpb.New(namespaceRetention)
	return sqliteschema.CreateNamespaces(cfg, ns)
}
