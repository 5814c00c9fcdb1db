# Container image of the mediamock server, for CI services and local use.
#
#   docker build -t mediamock --build-arg VERSION=1.2.3 .
#   podman build --format docker -t mediamock --build-arg VERSION=1.2.3 .
#   docker run --rm -p 8080:8080 mediamock
#
# The base images are named in full (registry, repository, tag): podman and
# buildah resolve no short name without a search registry. Podman's and
# buildah's default OCI format has no HEALTHCHECK: build with --format docker.
# Offline (docs/how-to/install.md): the bases loaded under these names or
# given as GO_IMAGE and RUNTIME_IMAGE, the modules from a vendor directory
# (go mod vendor) with --build-arg GOFLAGS=-mod=vendor.
#
# scripts/container-check builds the binary with the same command as the
# build stage below and checks it without a container engine; keep the two in
# step (the script reads the `go build` line from this file).
# scripts/container-e2e builds this file, unchanged, with podman and runs the
# image (base images made locally under the default names below).

ARG GO_IMAGE=docker.io/library/golang:1.26-bookworm
ARG RUNTIME_IMAGE=gcr.io/distroless/static-debian12:nonroot

# ---- build: a static binary ------------------------------------------------
FROM ${GO_IMAGE} AS build
WORKDIR /src
# Modules first, in their own layer: it is rebuilt only when go.mod or go.sum change.
# With GOFLAGS=-mod=vendor the modules come from the context's vendor directory instead.
COPY go.mod go.sum ./
ARG GOFLAGS=
RUN if [ "$GOFLAGS" = -mod=vendor ]; then echo "modules: vendor/"; else go mod download && go mod verify; fi
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/mockserver ./cmd/mockserver
# The data directory, copied below with the runtime user as owner (the runtime image has no shell to make it).
RUN mkdir -p /out/data

# ---- runtime: the binary alone, as a non-root user -------------------------
FROM ${RUNTIME_IMAGE}
ARG VERSION=dev
ARG REVISION=unknown
ARG RUNTIME_IMAGE
LABEL org.opencontainers.image.title="mediamock" \
      org.opencontainers.image.description="Stateful mock server of the media generation service's REST API v1, for contract tests and local development" \
      org.opencontainers.image.source="https://github.com/mediamock/mediamock" \
      org.opencontainers.image.url="https://github.com/mediamock/mediamock" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.base.name="${RUNTIME_IMAGE}" \
      io.modelcontextprotocol.server.name="io.github.mediamock/mediamock"
COPY --from=build /out/mockserver /mockserver
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
WORKDIR /data
VOLUME /data
ENV MOCKSERVER_ADDR=0.0.0.0:8080 \
    MOCKSERVER_DB=/data/mediamock.db
EXPOSE 8080
# `mockserver health` derives its URL from MOCKSERVER_ADDR (0.0.0.0 -> 127.0.0.1);
# exec form, since the runtime image has no shell.
HEALTHCHECK --interval=5s --timeout=5s --start-period=5s --retries=3 \
    CMD ["/mockserver", "health"]
ENTRYPOINT ["/mockserver"]
