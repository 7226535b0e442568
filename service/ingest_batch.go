package service

import (
	"context"
	"errors"
	"sort"
	"sync"
	"time"

	"github.com/causeway/causeway/models"
)

// Group commit of webhook incidents. Every new incident of a tenant spends its
// event quota on one counter row whose lock is held until commit, so committing
// each alert in its own transaction serialises a tenant's ingestion at one WAL
// flush per alert. The writer instead gathers the alerts that arrive while the
// previous transaction commits and records them together: one transaction, one
// flush and one counter increment for the whole group. A request still waits for
// the commit of its own group before it is answered, so a 202 always means durable.
const (
	// batchMax bounds one transaction, keeping its statements well under the
	// databases' parameter limits and its lock time short.
	batchMax = 128
	// batchWriters is how many group transactions may be in flight at once per
	// process: a second one fills while the first commits.
	batchWriters = 2
	// batchTimeout bounds one group transaction, independently of the requests
	// waiting for it (a client that hangs up must not abort its neighbours).
	batchTimeout = 15 * time.Second
	// queueMax bounds the alerts waiting for a group: past it the database is
	// not keeping up, and answering 503 (the tools retry) beats holding ever more
	// requests and their memory.
	queueMax = 8 * batchMax
	// tenantQueueMax is one tenant's share of the queue: a tenant whose storm
	// outruns the database gets 503 for its own alerts while the rest of the
	// queue stays open to every other tenant.
	tenantQueueMax = queueMax / 4
)

// errWriterBacklog is create's answer when queueMax alerts, or the tenant's
// tenantQueueMax, are already waiting.
var errWriterBacklog = errors.New("too many alerts are waiting to be written")

// incidentWriter records incidents in groups; see the constants above.
type incidentWriter struct {
	store *models.Store

	mu      sync.Mutex
	queue   []*incidentJob
	running int
	// waiting counts each tenant's jobs in queue.
	waiting map[string]int
}

// incidentJob is one incident waiting for its group's commit. err is nil when
// it was inserted, models.ErrConflict when its dedup key was taken, else the
// failure.
type incidentJob struct {
	item models.NewIncident
	done chan error
}

func newIncidentWriter(store *models.Store) *incidentWriter {
	return &incidentWriter{store: store, waiting: map[string]int{}}
}

// create records inc and its first timeline entry with the semantics of
// Store.CreateIncident, sharing a transaction with concurrent callers. Writers
// exist only while there is work, so an idle process holds no goroutine. A full
// queue is errWriterBacklog, before anything is queued.
func (w *incidentWriter) create(inc *models.Incident, first models.TimelineEntry) error {
	j := &incidentJob{item: models.NewIncident{Incident: inc, First: first}, done: make(chan error, 1)}
	tenant := inc.TenantID
	w.mu.Lock()
	if len(w.queue) >= queueMax || w.waiting[tenant] >= tenantQueueMax {
		w.mu.Unlock()
		return errWriterBacklog
	}
	w.queue = append(w.queue, j)
	w.waiting[tenant]++
	if w.running < batchWriters {
		w.running++
		go w.loop()
	}
	w.mu.Unlock()
	return <-j.done
}

// loop commits groups until the queue is empty.
func (w *incidentWriter) loop() {
	for {
		w.mu.Lock()
		if len(w.queue) == 0 {
			w.running--
			w.mu.Unlock()
			return
		}
		batch := w.take()
		w.mu.Unlock()
		w.flush(batch)
	}
}

// take removes the next group from the queue and from its tenants' shares;
// w.mu is held.
func (w *incidentWriter) take() []*incidentJob {
	n := min(len(w.queue), batchMax)
	batch := make([]*incidentJob, n)
	copy(batch, w.queue)
	w.queue = append(w.queue[:0], w.queue[n:]...)
	for _, j := range batch {
		t := j.item.Incident.TenantID
		if w.waiting[t]--; w.waiting[t] == 0 {
			delete(w.waiting, t)
		}
	}
	return batch
}

// dedupKey is the incident's key in the dedup index, or "" when it has none.
func dedupKey(inc *models.Incident) string {
	if inc.SourceAlertID == "" {
		return ""
	}
	return inc.TenantID + "\x00" + inc.Source + "\x00" + inc.SourceAlertID
}

// flush commits one group. Jobs sharing a dedup key are folded into the first
// (a multi-row insert must not carry the same key twice); the others learn the
// leader's fate: a duplicate of it when it was inserted, its error otherwise.
func (w *incidentWriter) flush(batch []*incidentJob) {
	ctx, cancel := context.WithTimeout(context.Background(), batchTimeout)
	defer cancel()
	// One insertion order for every writer and process, so concurrent groups
	// wait on each other's keys instead of deadlocking. Tenant first keeps each
	// tenant's alerts together for commit's per-tenant retry.
	sort.SliceStable(batch, func(i, j int) bool {
		a, b := batch[i].item.Incident, batch[j].item.Incident
		if a.TenantID != b.TenantID {
			return a.TenantID < b.TenantID
		}
		return dedupKey(a) < dedupKey(b)
	})
	var leaders []*incidentJob
	followers := map[*incidentJob][]*incidentJob{}
	byKey := map[string]*incidentJob{}
	for _, j := range batch {
		k := dedupKey(j.item.Incident)
		if l, ok := byKey[k]; ok && k != "" {
			followers[l] = append(followers[l], j)
			continue
		}
		byKey[k] = j
		leaders = append(leaders, j)
	}
	results := make([]error, len(leaders))
	w.commit(ctx, leaders, results)
	for i, l := range leaders {
		l.done <- results[i]
		for _, f := range followers[l] {
			if results[i] == nil {
				f.done <- models.ErrConflict
			} else {
				f.done <- results[i]
			}
		}
	}
}

// commit records leaders in one transaction and sets each one's result. A group
// that fails as a whole committed nothing (should a lost connection hide a
// commit that did happen, the retry finds the rows and answers 409 naming them:
// never a second incident). A group of several tenants is then tried again
// tenant by tenant, so one tenant's spent quota or bad row costs only that
// tenant its group commit; a single tenant's group goes one alert at a time,
// which finds the alerts that fit a nearly spent quota and isolates any other
// failure to its alert. leaders must be sorted by tenant.
func (w *incidentWriter) commit(ctx context.Context, leaders []*incidentJob, results []error) {
	items := make([]models.NewIncident, len(leaders))
	for i, l := range leaders {
		items[i] = l.item
	}
	created, err := w.store.CreateIncidents(ctx, items)
	switch {
	case err == nil:
		for i := range leaders {
			if !created[i] {
				results[i] = models.ErrConflict
			}
		}
	case len(leaders) == 1:
		results[0] = err
	case leaders[0].item.Incident.TenantID != leaders[len(leaders)-1].item.Incident.TenantID:
		for start := 0; start < len(leaders); {
			end := start + 1
			for end < len(leaders) && leaders[end].item.Incident.TenantID == leaders[start].item.Incident.TenantID {
				end++
			}
			w.commit(ctx, leaders[start:end], results[start:end])
			start = end
		}
	default:
		for i, l := range leaders {
			_, results[i] = w.store.CreateIncident(ctx, l.item.Incident, l.item.First)
		}
	}
}

// recentAlertsMax bounds the memory of recentAlerts; reaching it starts afresh.
const recentAlertsMax = 100000

// recentAlerts remembers the dedup keys this process recently ingested and,
// once known, the incident each one belongs to. A dedup key belongs to its
// incident for good (incidents are never deleted and the key never moves), so
// a remembered incident answers a repeat delivery without the database: in an
// alert storm most deliveries are such repeats, and the duplicate should be the
// cheap case. A key whose incident is not known yet is only a hint for choosing
// the cheaper path (a read instead of an insert that finds the conflict); both
// give the same answer.
type recentAlerts struct {
	mu   sync.Mutex
	keys map[string]string
}

// lookup reports whether the key was seen and the incident it belongs to (""
// while unknown).
func (r *recentAlerts) lookup(key string) (string, bool) {
	if key == "" {
		return "", false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	id, ok := r.keys[key]
	return id, ok
}

func (r *recentAlerts) add(key string) { r.remember(key, "") }

// remember records the key, with its incident when known; a known incident is
// never replaced by "".
func (r *recentAlerts) remember(key, incidentID string) {
	if key == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.keys == nil || len(r.keys) >= recentAlertsMax {
		r.keys = map[string]string{}
	}
	if incidentID != "" || r.keys[key] == "" {
		r.keys[key] = incidentID
	}
}
