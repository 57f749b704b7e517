# deepresearch as a container image: one static binary (pure Go: the SQLite driver is modernc.org/sqlite, so
# CGO_ENABLED=0 builds everything) on distroless, running as the unprivileged user nonroot (65532).
#
#   docker build -t deepresearch:local .
#   docker build --build-arg VERSION=v1.2.0 --build-arg COMMIT=$(git rev-parse --short=12 HEAD) -t deepresearch:v1.2.0 .
#
# The image holds no secret and no configuration: keys, the state's URL and the Temporal address come from the
# environment at run time (deploy/compose.yaml, deploy/.env.example). It carries no browser: every export works
# except PDF, which needs Chromium and fails with a message saying so (`--format html` needs none).
# internal/scaletest's TestDockerfileBuildsAStaticBinary runs the build command below and starts the binary.

# The Go release go.mod asks for; pin by digest (golang:1.26.8-bookworm@sha256:…) for reproducible builds.
FROM golang:1.26.8-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ARG VERSION=dev
ARG COMMIT=
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -buildvcs=false \
    -ldflags="-s -w -X github.com/deepresearch/deepresearch/internal/cli.Version=${VERSION} -X github.com/deepresearch/deepresearch/internal/cli.Commit=${COMMIT}" \
    -o /out/deepresearch ./cmd/deepresearch
# The folder the runs, indexes and caches live in, owned by nonroot (distroless has no shell to create it).
RUN mkdir -p /out/data && chown 65532:65532 /out/data

# CA certificates, tzdata and /etc/passwd with nonroot; nothing else (no shell, no package manager).
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/deepresearch /deepresearch
COPY --from=build --chown=65532:65532 /out/data /data
# Everything the program writes goes under /data: run folders (runs/), corpus indexes and fetched pages (cache),
# chat history (state), the MCP server's runs (share). Mount a volume there to keep it.
ENV XDG_CACHE_HOME=/data/cache XDG_STATE_HOME=/data/state XDG_DATA_HOME=/data/share XDG_CONFIG_HOME=/data/config
WORKDIR /data
USER nonroot:nonroot
ENTRYPOINT ["/deepresearch"]
CMD ["--help"]
