# Production image: gunicorn serving the API by default; `cartouche-worker` runs an RQ worker.
# REDIS_URL is required (the embedded server is for `make run` on one machine only).
#   docker build -t cartouche .
#   docker run -e REDIS_URL=redis://redis:6379/0 -p 8000:8000 cartouche
#   docker run -e REDIS_URL=redis://redis:6379/0 cartouche cartouche-worker --with-scheduler

FROM python:3.11-slim AS build
WORKDIR /src
RUN pip install --no-cache-dir --upgrade pip build
COPY pyproject.toml README.md ./
COPY service ./service
COPY workers ./workers
RUN python -m build --wheel --outdir /wheels . \
 && pip wheel --no-cache-dir --wheel-dir /wheels /wheels/cartouche-*.whl

FROM python:3.11-slim AS runtime
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 HOST=0.0.0.0 PORT=8000
RUN useradd --create-home --uid 10001 cartouche
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir --no-index --find-links /wheels cartouche \
 && rm -rf /wheels
USER cartouche
WORKDIR /home/cartouche
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=3s CMD python -c "import urllib.request,os; urllib.request.urlopen(f'http://127.0.0.1:{os.environ[\"PORT\"]}/readyz')"
CMD ["sh", "-c", ": \"${REDIS_URL:?REDIS_URL is required}\"; exec gunicorn --config python:service.gunicorn_conf --bind \"${HOST}:${PORT}\" 'service.app:wsgi()'"]
