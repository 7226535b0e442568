package analyzer

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"
)

// TestLoadDirReadsCompressedScenarios: a *.json.gz file loads like its
// *.json form, in name order with the others.
func TestLoadDirReadsCompressedScenarios(t *testing.T) {
	dir := t.TempDir()
	raw, err := os.ReadFile(filepath.Join("testdata", "public", "disk_full.json"))
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(raw)
	_ = zw.Close()
	if err := os.WriteFile(filepath.Join(dir, "b.json.gz"), gz.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.json"), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := LoadScenarios(dir)
	if err != nil || len(got) != 2 || got[0].ID != got[1].ID || got[1].Expected.Category != CategoryDiskFull {
		t.Fatalf("%v %+v", err, got)
	}
}
