package analyzer

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/testenv"
)

func runAll(in Input) Result {
	var reps []AgentReport
	for _, r := range Roles {
		reps = append(reps, Investigate(r, in))
	}
	return Synthesize(in, reps)
}

// evalDir runs every scenario of dir and returns the number answered correctly.
func evalDir(t *testing.T, dir string) (correct, total int) {
	t.Helper()
	scs, err := LoadScenarios(dir)
	if err != nil {
		t.Fatal(err)
	}
	var rightSum, wrongSum float64
	var nWrong int
	for _, s := range scs {
		res := runAll(s.Input())
		ok := res.Category == s.Expected.Category
		mark := "ok  "
		if ok {
			correct++
			rightSum += res.Confidence
		} else {
			mark = "FAIL"
			nWrong++
			wrongSum += res.Confidence
		}
		top := ""
		for i, h := range res.Hypotheses {
			if i == 3 {
				break
			}
			top += " " + h.Category + "=" + ftoa(h.Score)
		}
		t.Logf("%s %-32s want=%-26s got=%-26s conf=%.2f dropped=%d |%s", mark, s.ID, s.Expected.Category, res.Category, res.Confidence, res.Dropped, top)
		if res.Dropped != 0 {
			t.Errorf("%s: offline agents produced %d invalid findings", s.ID, res.Dropped)
		}
	}
	total = len(scs)
	if correct > 0 {
		t.Logf("mean confidence right: %.2f (%d)", rightSum/float64(correct), correct)
	}
	if nWrong > 0 {
		t.Logf("mean confidence wrong: %.2f (%d)", wrongSum/float64(nWrong), nWrong)
	}
	t.Logf("accuracy %d/%d", correct, total)
	return correct, total
}

func ftoa(f float64) string {
	return string([]byte{byte('0' + int(f)), '.', byte('0' + int(f*10)%10), byte('0' + int(f*100)%10)})
}

func TestPublicScenarios(t *testing.T) {
	correct, total := evalDir(t, testenv.ScenariosDir(t))
	if total != 16 {
		t.Fatalf("expected 16 public scenarios, found %d", total)
	}
	if correct < 15 {
		t.Fatalf("public accuracy %d/%d, want >= 15", correct, total)
	}
}

func TestHoldoutScenarios(t *testing.T) {
	correct, total := evalDir(t, filepath.Join("testdata", "holdout"))
	if total < 16 {
		t.Fatalf("holdout has %d scenarios, want >= 16", total)
	}
	// 93 of 100 since the rules match only what systems print (98 while
	// some rules copied the narration of these files).
	if float64(correct) < 0.93*float64(total) {
		t.Fatalf("holdout accuracy %d/%d, want >= 93%%", correct, total)
	}
}

// TestJoinedContextReadsLikeSeparateEntries: the API receives a scenario's
// context joined with blank lines (as scenarios/README.md prescribes); after
// Excerpts the analysis must be the one the separate entries give.
func TestJoinedContextReadsLikeSeparateEntries(t *testing.T) {
	t.Run("holdout", func(t *testing.T) { checkJoinedContext(t, filepath.Join("testdata", "holdout")) })
	t.Run("public", func(t *testing.T) { checkJoinedContext(t, testenv.ScenariosDir(t)) })
}

func checkJoinedContext(t *testing.T, dir string) {
	scs, err := LoadScenarios(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range scs {
		separate := s.Input()
		joined := s.Input()
		joined.Context = Excerpts([]string{strings.Join(s.Context, "\n\n")})
		// An entry that itself holds a blank line splits into more excerpts;
		// the answer must still be the same.
		same := reflect.DeepEqual(joined.Context, separate.Context)
		if !same && !anyBlankLine(s.Context) {
			t.Errorf("%s: excerpts differ from the entries", s.ID)
			continue
		}
		if a, b := runAll(separate), runAll(joined); a.Category != b.Category || (same && a.Confidence != b.Confidence) {
			t.Errorf("%s: separate %s %.2f, joined %s %.2f", s.ID, a.Category, a.Confidence, b.Category, b.Confidence)
		}
	}
}

func TestExcerpts(t *testing.T) {
	got := Excerpts([]string{"a\n  b\r\n\r\nc", "  \n\n", "d\n \t\ne\n"})
	want := []string{"a\n  b", "c", "d", "e"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Excerpts = %q, want %q", got, want)
	}
}

func anyBlankLine(entries []string) bool {
	for _, e := range entries {
		if blankLine.MatchString(e) {
			return true
		}
	}
	return false
}
