# Herald: one image for the relay and the assistant. Data lives in the /data volume.
FROM node:24-slim AS build
WORKDIR /app
COPY . .
# npm ci's prepare builds the plugin contract package (packages/plugin-api/dist) and the web
# client (core/web/dist); a failure of either fails the image build. Optional dependencies stay:
# they carry the native bindings the web build and the contract's declarations are made with.
RUN npm ci
RUN npm prune --omit=dev

FROM node:24-slim
ENV NODE_ENV=production SERVICE_DATA_DIR=/data SERVICE_HOST=0.0.0.0 SERVICE_PORT=8080 SERVICE_SUPERVISED=true \
  MALLOC_ARENA_MAX=2
RUN apt-get update && apt-get install -y --no-install-recommends fonts-dejavu-core && rm -rf /var/lib/apt/lists/* \
  && groupadd --system herald && useradd --system --gid herald --home /app herald \
  && mkdir -p /data && chown herald:herald /data \
  && printf '%s\n' '#!/bin/sh' \
    '# Herald command line (core/src/cli) with the Node flags of the service: docker exec herald herald <command>' \
    'exec node --max-semi-space-size=16 --max-old-space-size=1024 /app/core/src/cli/main.ts "$@"' > /usr/local/bin/herald \
  && chmod 755 /usr/local/bin/herald
WORKDIR /app
COPY --from=build --chown=herald:herald /app /app
USER herald
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:8080/api/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# The container runtime's restart policy is the supervisor (SERVICE_SUPERVISED=true above).
# The Node flags, and MALLOC_ARENA_MAX above, are those of scripts/node-flags.ts (the young generation's size, chosen
# for streaming replies; the heap limit, which keeps the old generation smaller under a burst of webhooks; malloc's
# arenas). It runs the built service (core/dist, made by npm ci's prepare above), as npm start does.
CMD ["node", "--max-semi-space-size=16", "--max-old-space-size=1024", "core/dist/main.js"]
