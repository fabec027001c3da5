FROM python:3.11-slim
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends nodejs npm libcairo2 && rm -rf /var/lib/apt/lists/*
COPY . .
# GT_EXTRAS="[models]" builds the model-worker image with torch (docker-compose's torch-worker);
# the web image has no torch: the web process never imports it.
ARG GT_EXTRAS=""
RUN pip install --no-cache-dir -e ".${GT_EXTRAS}" && npm ci --no-audit --no-fund && scripts/vendor.sh
ENV PYTHONUNBUFFERED=1
EXPOSE 8000
