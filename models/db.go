package models

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	// The pure-Go SQLite driver, registered as "sqlite"; the embedded Temporal
	// server uses the same one.
	_ "modernc.org/sqlite"
)

// Errors the store returns; the service layer turns them into API errors.
var (
	ErrNotFound      = errors.New("not found")
	ErrConflict      = errors.New("conflict")
	ErrQuotaExceeded = errors.New("quota exceeded")
)

// Store is the database handle shared by the API and the worker's activities.
type Store struct {
	db      *gorm.DB
	dialect string
}

// Open connects to PostgreSQL when url is set, else to the SQLite file at sqlitePath
// (":memory:" for a private in-memory database).
func Open(ctx context.Context, url, sqlitePath string) (*Store, error) {
	cfg := &gorm.Config{
		Logger:                 logger.Discard,
		SkipDefaultTransaction: true,
		NowFunc:                func() time.Time { return time.Now().UTC() },
	}
	var (
		db      *gorm.DB
		err     error
		dialect string
	)
	if url != "" {
		dialect = "postgres"
		db, err = gorm.Open(postgres.Open(url), cfg)
	} else {
		dialect = "sqlite"
		dsn := "file::memory:"
		if sqlitePath != ":memory:" {
			if err := os.MkdirAll(filepath.Dir(sqlitePath), 0o700); err != nil {
				return nil, fmt.Errorf("create database dir: %w", err)
			}
			dsn = "file:" + sqlitePath
		}
		// WAL and a busy timeout let readers run beside the writer; immediate
		// transactions take the write lock up front instead of failing mid-way.
		dsn += "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)&_txlock=immediate"
		db, err = gorm.Open(sqlite.New(sqlite.Config{DriverName: "sqlite", DSN: dsn}), cfg)
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", dialect, err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, err
	}
	if dialect == "sqlite" {
		// One connection: SQLite has one writer anyway, and an in-memory database
		// exists per connection.
		sqlDB.SetMaxOpenConns(1)
	} else {
		sqlDB.SetMaxOpenConns(40)
		sqlDB.SetMaxIdleConns(40)
		sqlDB.SetConnMaxIdleTime(5 * time.Minute)
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := sqlDB.PingContext(pctx); err != nil {
		_ = sqlDB.Close()
		return nil, fmt.Errorf("connect %s: %w", dialect, err)
	}
	return &Store{db: db, dialect: dialect}, nil
}

// Migrate creates or updates every table and index. It is idempotent and runs from
// `causeway migrate` and at the start of `make run`.
func (s *Store) Migrate(ctx context.Context) error {
	if err := s.db.WithContext(ctx).AutoMigrate(append(All(), registeredRows()...)...); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// Dialect is "postgres" or "sqlite"; it names the database in health reports.
func (s *Store) Dialect() string { return s.dialect }

// Ping checks the database answers.
func (s *Store) Ping(ctx context.Context) error {
	sqlDB, err := s.db.DB()
	if err != nil {
		return err
	}
	return sqlDB.PingContext(ctx)
}

// Close releases the connection pool.
func (s *Store) Close() error {
	sqlDB, err := s.db.DB()
	if err != nil {
		return err
	}
	return sqlDB.Close()
}

// DB exposes the handle for tests and benchmarks that need raw SQL.
func (s *Store) DB() *gorm.DB { return s.db }

// IsUniqueViolation recognises a unique-index conflict on both databases.
func IsUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "23505"
	}
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")
}

var (
	rowsMu sync.Mutex
	rows   []any
)

// RegisterRows adds a domain's own tables to every migration. Each domain
// (remediation, …) calls it from its store's init, so the kernel migrates rows
// it does not know and a domain's tables live with its code.
func RegisterRows(models ...any) {
	rowsMu.Lock()
	defer rowsMu.Unlock()
	rows = append(rows, models...)
}

func registeredRows() []any {
	rowsMu.Lock()
	defer rowsMu.Unlock()
	return slices.Clone(rows)
}
