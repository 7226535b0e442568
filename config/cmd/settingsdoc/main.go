// Command settingsdoc writes the configuration table of the README from the
// settings table in config/settings.go, between the README's two settings
// markers, so the README lists every setting with its real default.
//
// From the repository root: go run ./config/cmd/settingsdoc README.md (or
// go generate ./config).
package main

import (
	"fmt"
	"os"

	"github.com/causeway/causeway/config"
)

func main() {
	path := "README.md"
	if len(os.Args) > 1 {
		path = os.Args[1]
	}
	if err := rewrite(path); err != nil {
		fmt.Fprintln(os.Stderr, "settingsdoc:", err)
		os.Exit(1)
	}
}

// rewrite replaces the table in the file at path, keeping its permissions.
func rewrite(path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out, err := config.SpliceSettingsTable(string(raw))
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	return os.WriteFile(path, []byte(out), st.Mode().Perm())
}
