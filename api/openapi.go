package api

import (
	_ "embed"
	"net/http"

	"github.com/gin-gonic/gin"
)

// openAPIDoc is the hand-written OpenAPI 3.1 description of the whole surface. A
// test walks the router's routes and fails on any route missing here or any
// path here that no route serves, so it cannot drift.
//
//go:embed openapi.json
var openAPIDoc []byte

// OpenAPI returns the document, for tests and tooling.
func OpenAPI() []byte { return openAPIDoc }

func serveOpenAPI(c *gin.Context) { c.Data(http.StatusOK, "application/json", openAPIDoc) }
