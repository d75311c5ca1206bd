# nnd: multi-stage build. The build stage runs the project's own scripts, exactly as a
# developer does (scripts/install-deps.sh, then the Makefile's build); the runtime stage
# carries only the daemon, the tool and their shared libraries.
FROM debian:bookworm AS build
WORKDIR /src
COPY scripts/install-deps.sh scripts/install-deps.sh
RUN ./scripts/install-deps.sh
COPY . .
RUN make BUILD=build

FROM debian:bookworm-slim AS runtime
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends \
      libuv1 libprotobuf-c1 libnanomsg5 libsqlite3-0 libb2-1 libcjson1 \
      libxnnpack0 libpthreadpool0 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/build/nnd /src/build/nndctl /usr/local/bin/
COPY --from=build /src/build/libnnd.so /usr/local/lib/
RUN ldconfig
# The socket and the state (cache index, bus sockets) live on volumes, so clients on the
# host or in other containers can reach the daemon and its state survives restarts.
VOLUME ["/run/nnd", "/var/lib/nnd"]
ENV NND_SOCKET=/run/nnd/nnd.sock NND_STATE_DIR=/var/lib/nnd
ENTRYPOINT ["/usr/local/bin/nnd"]
