# SPDX-License-Identifier: Apache-2.0
# nnd: multi-stage build. The build stage installs the build dependencies with the
# project's own script and builds and installs the daemon, nndctl, libnnd and the
# plugins (no tests) into /usr/local; the runtime stage carries those and their shared
# libraries only, and runs the daemon as an unprivileged user.
# `make container-test` builds and runs this with podman (scripts/container-test.sh).
FROM debian:bookworm AS build
WORKDIR /src
COPY scripts/install-deps.sh scripts/install-deps.sh
RUN ./scripts/install-deps.sh --build-only
COPY . .
RUN cmake -S . -B /build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNND_BUILD_TESTS=OFF \
 && cmake --build /build -j "$(nproc)" \
 && cmake --install /build --prefix /usr/local --strip

FROM debian:bookworm-slim AS runtime
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends \
      libuv1 libprotobuf-c1 libnanomsg5 libsqlite3-0 libb2-1 libcjson1 \
      libxnnpack0 libpthreadpool0 libsystemd0 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /usr/local/bin/nnd /usr/local/bin/nndctl /usr/local/bin/
COPY --from=build /usr/local/lib/ /usr/local/lib/
RUN rm -rf /usr/local/lib/pkgconfig /usr/local/lib/*.a \
 && ldconfig \
 && useradd --system --uid 10001 --user-group --home-dir /var/lib/nnd --no-create-home nnd \
 && mkdir -p /run/nnd /var/lib/nnd \
 && chown nnd:nnd /run/nnd /var/lib/nnd \
 && chmod 0755 /run/nnd && chmod 0700 /var/lib/nnd
# The socket and the state (cache index, bus sockets) live on volumes, so clients on the
# host or in other containers can reach the daemon and its state survives restarts. A
# directory mounted there must be writable by uid 10001 (or run with --user).
VOLUME ["/run/nnd", "/var/lib/nnd"]
ENV NND_SOCKET=/run/nnd/nnd.sock NND_STATE_DIR=/var/lib/nnd
USER nnd
ENTRYPOINT ["/usr/local/bin/nnd"]
