package api

import (
	"time"

	"github.com/causeway/causeway/models"
)

// incidentJSON is an incident as lists show it; the detail view adds tags,
// metadata and the timeline.
type incidentJSON struct {
	IncidentID  string     `json:"incidentId"`
	Title       string     `json:"title"`
	Description string     `json:"description"`
	Severity    string     `json:"severity"`
	Status      string     `json:"status"`
	Source      string     `json:"source"`
	Service     string     `json:"service"`
	Environment string     `json:"environment"`
	CreatedAt   time.Time  `json:"createdAt"`
	UpdatedAt   time.Time  `json:"updatedAt"`
	ResolvedAt  *time.Time `json:"resolvedAt"`
	// AlertCount counts the alerts grouped into the incident, the first one
	// included (README, "Alert grouping").
	AlertCount int `json:"alertCount"`
}

// incidentDetailJSON adds what GET /v1/incidents/{id} shows.
type incidentDetailJSON struct {
	incidentJSON
	Tags     map[string]string `json:"tags"`
	Metadata map[string]any    `json:"metadata"`
	Timeline []timelineJSON    `json:"timeline"`
}

type timelineJSON struct {
	At      time.Time `json:"at"`
	Kind    string    `json:"kind"`
	Message string    `json:"message"`
	Actor   string    `json:"actor"`
}

// createdIncidentJSON is the 201 body of POST /v1/incidents/chat.
type createdIncidentJSON struct {
	incidentJSON
	InvestigationsRemaining int `json:"investigationsRemaining"`
	EventsRemaining         int `json:"eventsRemaining"`
}

func toIncident(i *models.Incident) incidentJSON {
	return incidentJSON{
		IncidentID: i.ID, Title: i.Title, Description: i.Description, Severity: i.Severity, Status: i.Status,
		Source: i.Source, Service: i.Service, Environment: i.Environment,
		CreatedAt: i.CreatedAt.UTC(), UpdatedAt: i.UpdatedAt.UTC(), ResolvedAt: utc(i.ResolvedAt),
		AlertCount: max(i.AlertCount, 1),
	}
}

func toIncidentDetail(i *models.Incident, tl []models.TimelineEntry) incidentDetailJSON {
	out := incidentDetailJSON{incidentJSON: toIncident(i), Tags: i.Tags, Metadata: i.Metadata, Timeline: make([]timelineJSON, len(tl))}
	if out.Tags == nil {
		out.Tags = map[string]string{}
	}
	if out.Metadata == nil {
		out.Metadata = map[string]any{}
	}
	for k, e := range tl {
		out.Timeline[k] = timelineJSON{At: e.At.UTC(), Kind: e.Kind, Message: e.Message, Actor: e.Actor}
	}
	return out
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// userJSON is a user as the API shows it: never the password hash.
type userJSON struct {
	UserID    string    `json:"userId"`
	Email     string    `json:"email"`
	Name      string    `json:"name"`
	Role      string    `json:"role"`
	CreatedAt time.Time `json:"createdAt"`
}

func toUser(u *models.User) userJSON {
	return userJSON{UserID: u.ID, Email: u.Email, Name: u.Name, Role: u.Role, CreatedAt: u.CreatedAt.UTC()}
}
