# nodereg's registry as a container: `docker build -t nodereg .` then
# `docker run -p 4880:4880 -v nodereg-data:/data nodereg` (docs/deploy.md).

# Build stage: the full install (dev dependencies included) builds dist/, then drops the dev dependencies.
FROM node:20-bookworm-slim AS build
WORKDIR /src
# better-sqlite3 compiles its native module when no prebuilt binary matches.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` would build before the sources are copied; only the native module needs its script.
RUN npm ci --ignore-scripts --no-audit --no-fund && npm rebuild better-sqlite3
COPY . .
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

# Runtime stage: production dependencies and the built CLI only, run as the image's unprivileged `node` user.
FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /src/package.json ./
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/bin ./bin
COPY --from=build /src/dist ./dist
RUN ln -s /app/bin/nodereg.js /usr/local/bin/nodereg \
 && mkdir /data \
 && chown node:node /data
USER node
VOLUME /data
EXPOSE 4880
# Slim images have no curl: node itself asks /healthz. NODEREG_HEALTHCHECK_URL overrides the URL when serve listens elsewhere.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch(process.env.NODEREG_HEALTHCHECK_URL || 'http://127.0.0.1:4880/healthz', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["nodereg", "serve", "--host", "0.0.0.0", "--data-dir", "/data"]
