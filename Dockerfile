# sqsprobe as a container: `sqsprobe serve` on 0.0.0.0:9324 by default (the port teams map for
# an SQS emulator), as a non-root user, with a health check; `run` and `audit` work in it too
# (the suites are built into the binary; evidence goes to /work, mount it to keep it).
#
#   docker build --build-arg SQSPROBE_BUILD_COMMIT="$(git rev-parse HEAD)" -t sqsprobe .
#   docker run --rm -p 9324:9324 sqsprobe
#   docker run --rm -v "$PWD/evidence:/work/evidence" sqsprobe run
#
# docs/install.md#container has docker-compose, GitHub Actions `services:` and testcontainers
# recipes, and says what was and was not exercised.

# A static (musl) build: the runtime image needs no libc of its own.
FROM rust:1.95-alpine AS build
# C compilers for mimalloc and aws-lc (the SDK's TLS).
RUN apk add --no-cache build-base cmake perl
WORKDIR /src
# The context has no .git: `--build-arg SQSPROBE_BUILD_COMMIT=$(git rev-parse HEAD)` gives
# `sqsprobe --version` its commit (else it says `unknown`).
ARG SQSPROBE_BUILD_COMMIT=""
COPY . .
RUN cargo build --release --locked --bin sqsprobe \
    && strip target/release/sqsprobe

FROM alpine:3.22
# busybox's wget is the health check's client; nothing else is added.
RUN addgroup -S -g 10001 sqsprobe \
    && adduser -S -D -H -u 10001 -G sqsprobe sqsprobe \
    && mkdir /work && chown sqsprobe:sqsprobe /work
COPY --from=build /src/target/release/sqsprobe /usr/local/bin/sqsprobe
USER 10001:10001
WORKDIR /work
EXPOSE 9324
# A ListQueues over the query protocol: answered 200 once the emulator serves (it does not
# check signatures). It asks port 9324: a `serve --listen` on another port needs its own check.
HEALTHCHECK --interval=5s --timeout=3s --start-period=5s --retries=3 \
    CMD ["wget", "-q", "-O", "/dev/null", "http://127.0.0.1:9324/?Action=ListQueues"]
ENTRYPOINT ["sqsprobe"]
CMD ["serve", "--listen", "0.0.0.0:9324"]
