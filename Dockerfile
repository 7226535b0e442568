# Builds the three Causeway binaries into one small image: /usr/local/bin/api,
# /usr/local/bin/worker and /usr/local/bin/causeway (run, migrate, eval).
# docker-compose.yml and the Helm chart (deploy/helm/causeway) pick the binary
# per process.
FROM golang:1.26 AS build
WORKDIR /src
ENV GOTOOLCHAIN=auto CGO_ENABLED=0
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN go build -trimpath -o /out/ ./cmd/...

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/ /usr/local/bin/
# The distroless nonroot user, by number so Kubernetes can verify runAsNonRoot.
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/api"]
