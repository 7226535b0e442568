package replay

import (
	"encoding/json"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/datasources"
	"github.com/causeway/causeway/investigation"
	"github.com/causeway/causeway/models"
)

// Recorded is what one investigation pass's history says it read.
type Recorded struct {
	// Queries are the data-source queries that answered, in the order their
	// answers arrived.
	Queries []RecordedQuery
	// Changes are the recorded changes the pass read.
	Changes []analyzer.Change
}

// RecordedQuery is one query and its answer as the history holds them.
type RecordedQuery struct {
	Query  datasources.Query
	Output investigation.QueryOutput
}

// localActivityMarker is the part of the SDK's local-activity marker data
// that names the activity.
type localActivityMarker struct {
	ActivityType string
}

// FromHistory walks a pass's history: each RunDataSourceQuery activity that
// completed gives its input and output, and the ReadChanges local activity's
// marker its result. Nothing is asked of any data source.
func FromHistory(it client.HistoryEventIterator) (Recorded, error) {
	dc := converter.GetDefaultDataConverter()
	var out Recorded
	scheduled := map[int64]datasources.Query{}
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return Recorded{}, fmt.Errorf("reading the pass's history: %w", err)
		}
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			a := e.GetActivityTaskScheduledEventAttributes()
			if a.GetActivityType().GetName() != investigation.NameRunDataSourceQuery {
				continue
			}
			var in investigation.QueryInput
			if err := dc.FromPayloads(a.GetInput(), &in); err != nil {
				return Recorded{}, fmt.Errorf("decoding query input: %w", err)
			}
			scheduled[e.GetEventId()] = in.Query
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			a := e.GetActivityTaskCompletedEventAttributes()
			q, ok := scheduled[a.GetScheduledEventId()]
			if !ok {
				continue
			}
			var res investigation.QueryOutput
			if err := dc.FromPayloads(a.GetResult(), &res); err != nil {
				return Recorded{}, fmt.Errorf("decoding query result: %w", err)
			}
			out.Queries = append(out.Queries, RecordedQuery{Query: q, Output: res})
		case enumspb.EVENT_TYPE_MARKER_RECORDED:
			if err := readChangesMarker(dc, e, &out); err != nil {
				return Recorded{}, err
			}
		}
	}
	return out, nil
}

// readChangesMarker takes the changes from the ReadChanges local activity's
// marker, and ignores every other marker.
func readChangesMarker(dc converter.DataConverter, e *historypb.HistoryEvent, out *Recorded) error {
	m := e.GetMarkerRecordedEventAttributes()
	data, result := m.GetDetails()["data"], m.GetDetails()["result"]
	if data == nil || result == nil || len(data.GetPayloads()) == 0 {
		return nil
	}
	var lm localActivityMarker
	if err := json.Unmarshal(data.GetPayloads()[0].GetData(), &lm); err != nil || lm.ActivityType != investigation.NameReadChanges {
		return nil
	}
	var ch investigation.ChangesOutput
	if err := dc.FromPayloads(result, &ch); err != nil {
		return fmt.Errorf("decoding recorded changes: %w", err)
	}
	out.Changes = ch.Changes
	return nil
}

// Answers lists the recorded answers under file-local source aliases; the
// sources come back in the order first read. settings gives each source's
// stored settings by id (never its URL or credential).
func (r Recorded) Answers(settings func(dataSourceID string) map[string]any) ([]Source, []Answer) {
	alias := map[string]string{}
	var srcs []Source
	answers := make([]Answer, 0, len(r.Queries))
	for _, rq := range r.Queries {
		q := rq.Query
		a, ok := alias[q.DataSourceID]
		if !ok {
			a = fmt.Sprintf("source-%d", len(srcs)+1)
			alias[q.DataSourceID] = a
			srcs = append(srcs, Source{Alias: a, Name: q.Source, Type: q.Type, Settings: settings(q.DataSourceID)})
		}
		// The lines are the tenant's logs as its systems printed them; the
		// file may travel, so credentials in them do not.
		answers = append(answers, Answer{Source: a, Type: q.Type, Entry: q.Entry, Query: q.Text, Start: q.Start, End: q.End,
			Readings: rq.Output.Values, Text: models.RedactSecrets(rq.Output.Text), Note: models.RedactSecrets(rq.Output.Note)})
	}
	return srcs, answers
}
