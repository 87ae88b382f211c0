# lockbench in a container, for runs across machines (deploy/k8s/,
# compose/distributed.yaml; docs/distributed.md). The image holds the
# lockbench binary only: it runs against Redis servers given with --addr
# (it does not start redis-server itself).
#
#   docker build -t lockbench:dev --build-arg COMMIT=$(git rev-parse --short HEAD) .
#   docker run --rm lockbench:dev version
#
# Build stage: a static binary (CGO off), the commit stamped in as `make
# build` does.
ARG GO_VERSION=1.26.8
FROM golang:${GO_VERSION}-alpine AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG COMMIT=unknown
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X github.com/lockbench/lockbench/internal/cli.gitCommit=${COMMIT}" \
      -o /out/lockbench ./cmd/lockbench

# Runtime stage: Alpine for its busybox sh (the merge step globs the
# segment files) and tar (kubectl cp and docker cp read /results through
# it). A non-root user, uid 65532, owns /results, so a fresh Docker named
# volume mounted there is writable; on Kubernetes the pod's fsGroup 65532
# makes the volume writable.
FROM alpine:3.22
RUN addgroup -S -g 65532 lockbench \
 && adduser -S -D -H -u 65532 -G lockbench -h /results lockbench \
 && mkdir -p /results && chown 65532:65532 /results
COPY --from=build /out/lockbench /usr/local/bin/lockbench
USER 65532:65532
WORKDIR /results
ENTRYPOINT ["lockbench"]
CMD ["--help"]
