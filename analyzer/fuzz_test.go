package analyzer

import (
	"path/filepath"
	"strings"
	"testing"
)

// FuzzInvestigate feeds arbitrary alert text and context to every agent and
// to synthesis: whatever a user pastes, the analyzer must not panic, and every
// finding it makes must cite the input and keep within the closed sets.
func FuzzInvestigate(f *testing.F) {
	scs, err := LoadScenarios(filepath.Join("testdata", "holdout"))
	if err != nil {
		f.Fatal(err)
	}
	// A few whole incidents seed the corpus; more only slow each run down.
	for _, s := range scs[:min(len(scs), 4)] {
		f.Add(s.Alert.Title, s.Alert.Description, strings.Join(s.Context, "\n\n"))
	}
	f.Add("", "", "")
	f.Add("?", "| lock |", "no? ; , | . ?")
	f.Fuzz(func(t *testing.T, title, desc, context string) {
		in := Input{Title: title, Description: desc, Context: Excerpts([]string{context})}
		var reps []AgentReport
		for _, role := range Roles {
			rep := Investigate(role, in)
			for _, fd := range rep.Findings {
				if !CitationValid(in, fd.Citation) || !ValidCategory(fd.Category) || fd.Strength < 0 || fd.Strength > 1 {
					t.Fatalf("%s: invalid finding %+v", role, fd)
				}
			}
			reps = append(reps, rep)
		}
		res := Synthesize(in, reps)
		if !ValidCategory(res.Category) || res.Dropped != 0 {
			t.Fatalf("synthesis %s, %d dropped", res.Category, res.Dropped)
		}
	})
}
