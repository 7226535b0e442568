// Package delivery is one slice: outbound webhook events.
//
// Domain writes put an event in the kernel's outbox in the same transaction
// as the change it reports; the relay (relay.go) turns each event into one
// DeliveryWorkflow (workflow.go) per subscribed endpoint, which makes one
// signed attempt per activity (activities.go) and retries with backoff for
// more than a day. Endpoints, deliveries and attempts are its own rows
// (store.go); service.go serves the endpoint routes.
package delivery
