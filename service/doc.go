// Package service is the only code that serves a request by talking to the store
// and to Temporal. Handlers bind input, call one method here and map its error
// (errcode).
package service
